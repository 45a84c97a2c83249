import type { EventBus, EventHandler, RuntimeEvent } from "../contracts/runtime-event.js";
import type { RunEventFanout } from "./run-queue.js";

/**
 * The runtime's event bus with every run event also handed to the queue's fan-out, so server nodes in other
 * processes see the events of the runs this process executes. Everything else is the bus it wraps.
 */
export class FanoutEventBus implements EventBus {
  constructor(
    readonly inner: EventBus,
    private readonly fanout: RunEventFanout,
  ) {}

  subscribe(name: string, handler: EventHandler): () => void {
    return this.inner.subscribe(name, handler);
  }

  emit(name: string, payload?: Record<string, unknown>): RuntimeEvent {
    return this.inner.emit(name, payload);
  }

  publish(event: RuntimeEvent): void {
    this.inner.publish(event);
    this.fanout.publish(event);
  }

  getHistory(options?: { name?: string; limit?: number }): RuntimeEvent[] {
    return this.inner.getHistory(options);
  }

  clearHistory(): void {
    this.inner.clearHistory();
  }

  flush(): Promise<void> {
    return this.inner.flush();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
