import type { RunTraceContext } from "../contracts/run-types.js";
import type { EventBus } from "../contracts/runtime-event.js";

export type { RunTraceContext };

/**
 * Where a tool call's own work runs with the call's span as the active one, so that spans the tool's code
 * starts (an instrumented HTTP client, a child run) nest under the call's span.
 */
export interface ToolSpanScope {
  /** Call `execute` with the span of the run's call `toolCallId` active; returns what it returns. */
  inToolSpan<T>(toolCallId: string, execute: () => T): T;
}

/**
 * An optional ability of an event bus that turns runs into traces (the `otel_bridge` bus): it names the trace
 * context of a run it follows, so the run's checkpoints keep it and a resumed run — in another process too —
 * carries it back in its `run.started` event and joins the same trace.
 */
export interface TraceContextCarrier {
  /**
   * The trace context of a run this bus is following, or undefined. Without `toolCallId`: the run's first span,
   * which its checkpoints keep. With it: the span that call's own work belongs under (the call's span while it
   * runs), which a child run started by the call names as its parent.
   */
  traceContextOf(runId: string, toolCallId?: string): RunTraceContext | undefined;
  /**
   * Where the run's tool calls can run with their spans active; undefined when that would change nothing (the
   * run is not recorded, or no context manager is installed to carry an active span), so an untraced run pays
   * nothing per call.
   */
  toolSpanScope?(runId: string): ToolSpanScope | undefined;
}

/** Whether the bus carries trace context across a run's resumes. */
export function isTraceContextCarrier(bus: EventBus): bus is EventBus & TraceContextCarrier {
  return typeof (bus as Partial<TraceContextCarrier>).traceContextOf === "function";
}

/** The bus's scope for making a run's tool spans active, or undefined when it has none for the run. */
export function toolSpanScopeOf(bus: EventBus, runId: string): ToolSpanScope | undefined {
  const carrier = bus as Partial<TraceContextCarrier>;
  return typeof carrier.toolSpanScope === "function" ? carrier.toolSpanScope(runId) : undefined;
}
