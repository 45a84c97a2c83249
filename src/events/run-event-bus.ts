import type { EventBus, EventHandler, RuntimeEvent } from "../contracts/runtime-event.js";
import type { RunEventLog } from "./run-event-log.js";
import {
  isTraceContextCarrier,
  type RunTraceContext,
  type ToolSpanScope,
  type TraceContextCarrier,
  toolSpanScopeOf,
} from "./trace-context-carrier.js";

/**
 * The event bus as a run's patterns, hooks and tools see it (`ctx.eventBus`). What they emit goes into the run's
 * numbered log — so `stream()`, `attach()` and a durable run's stored log see it with its sequence and run ids —
 * rather than straight to the bus beside the run. The bus itself belongs to the runtime: a run cannot close it.
 */
export class RunEventBus implements EventBus, TraceContextCarrier {
  constructor(private readonly log: RunEventLog) {}

  subscribe(name: string, handler: EventHandler): () => void {
    return this.log.bus.subscribe(name, handler);
  }

  emit(name: string, payload: Record<string, unknown> = {}): RuntimeEvent {
    return this.log.emit(name, payload);
  }

  publish(event: RuntimeEvent): void {
    this.log.bus.publish(event);
  }

  getHistory(options?: { name?: string; limit?: number }): RuntimeEvent[] {
    return this.log.bus.getHistory(options);
  }

  clearHistory(): void {
    this.log.bus.clearHistory();
  }

  flush(): Promise<void> {
    return this.log.bus.flush();
  }

  /** The bus's trace context of a run or of one of its tool calls: a tool starting a child run names it. */
  traceContextOf(runId: string, toolCallId?: string): RunTraceContext | undefined {
    const bus = this.log.bus;
    return isTraceContextCarrier(bus) ? bus.traceContextOf(runId, toolCallId) : undefined;
  }

  toolSpanScope(runId: string): ToolSpanScope | undefined {
    return toolSpanScopeOf(this.log.bus, runId);
  }

  /** Nothing: the runtime closes its bus when it closes. */
  async close(): Promise<void> {}
}
