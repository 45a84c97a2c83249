import { type EventBus, type EventHandler, RuntimeEvent } from "../contracts/runtime-event.js";
import {
  isTraceContextCarrier,
  type RunTraceContext,
  type ToolSpanScope,
  type TraceContextCarrier,
  toolSpanScopeOf,
} from "./trace-context-carrier.js";

/**
 * The part every wrapping event bus shares: subscriptions and history belong to the inner bus, and what is
 * published is forwarded there. Subclasses add what they do with each event in `publish`.
 */
export abstract class ForwardingEventBus implements EventBus, TraceContextCarrier {
  constructor(protected readonly inner: EventBus) {}

  /** Subscribe on the inner bus. */
  subscribe(name: string, handler: EventHandler): () => void {
    return this.inner.subscribe(name, handler);
  }

  /** Build an event outside any run, stamped now, and publish it. */
  emit(name: string, payload?: Record<string, unknown>): RuntimeEvent {
    const event = new RuntimeEvent(name, payload ?? {}, Date.now());
    this.publish(event);
    return event;
  }

  abstract publish(event: RuntimeEvent): void;

  /** The inner bus's history. */
  getHistory(options?: { name?: string; limit?: number }): RuntimeEvent[] {
    return this.inner.getHistory(options);
  }

  /** Clear the inner bus's history. */
  clearHistory(): void {
    this.inner.clearHistory();
  }

  /** The inner bus's trace context of a run: a tracing bus wrapped in this one still keeps its runs' traces. */
  traceContextOf(runId: string, toolCallId?: string): RunTraceContext | undefined {
    const inner = this.inner;
    return isTraceContextCarrier(inner) ? inner.traceContextOf(runId, toolCallId) : undefined;
  }

  /** The inner bus's scope for a run's tool spans. */
  toolSpanScope(runId: string): ToolSpanScope | undefined {
    return toolSpanScopeOf(this.inner, runId);
  }

  flush(): Promise<void> {
    return this.inner.flush();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
