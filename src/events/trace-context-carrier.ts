import type { RunTraceContext } from "../contracts/run-types.js";
import type { EventBus } from "../contracts/runtime-event.js";

export type { RunTraceContext };

/**
 * An optional ability of an event bus that turns runs into traces (the `otel_bridge` bus): it names the trace
 * context of a run it follows, so the run's checkpoints keep it and a resumed run — in another process too —
 * carries it back in its `run.started` event and joins the same trace.
 */
export interface TraceContextCarrier {
  /** The trace context of a run this bus is following, or undefined. */
  traceContextOf(runId: string): RunTraceContext | undefined;
}

/** Whether the bus carries trace context across a run's resumes. */
export function isTraceContextCarrier(bus: EventBus): bus is EventBus & TraceContextCarrier {
  return typeof (bus as Partial<TraceContextCarrier>).traceContextOf === "function";
}
