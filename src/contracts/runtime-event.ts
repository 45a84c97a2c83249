import type { RunResult } from "./run-types.js";

/**
 * One event. A run's events carry the run's identity and `sequence` (1, 2, 3, … per run); events outside a
 * run (`config.reloaded`) carry only `kind`, `payload` and the time. The same object is the run's log entry,
 * what the event bus delivers and, for most kinds, the `stream()` chunk — nothing is copied per consumer.
 */
export class RuntimeEvent {
  // biome-ignore lint/complexity/useMaxParams: made once per event, the hottest allocation of a run; positional fields keep it one object
  constructor(
    readonly kind: string,
    readonly payload: Record<string, unknown>,
    readonly timestampMs: number,
    readonly runId: string = "",
    readonly sessionId: string = "",
    readonly agentId: string = "",
    readonly sequence: number = 0,
  ) {}

  /** The older name for `kind`, kept for readers that use it. */
  get name(): string {
    return this.kind;
  }

  /** ISO-8601 UTC time. */
  get timestamp(): string {
    return new Date(this.timestampMs).toISOString();
  }

  /** Only `run.finished` carries the RunResult (`payload.result`, read here without the cast). */
  get result(): RunResult | undefined {
    return this.kind === "run.finished" ? (this.payload.result as RunResult) : undefined;
  }

  /**
   * The event as JSON (a `--json` line, what `JSON.stringify` gives): its fields and payload, as stores and logs
   * keep it. The `result` getter is left out: `run.finished` carries its RunResult once, as `payload.result`.
   */
  toJSON(): Record<string, unknown> {
    return {
      kind: this.kind,
      runId: this.runId,
      sessionId: this.sessionId,
      agentId: this.agentId,
      sequence: this.sequence,
      timestampMs: this.timestampMs,
      payload: this.payload,
    };
  }
}

export type EventHandler = (event: RuntimeEvent) => void | Promise<void>;

/** The event-bus seam. Handlers never break a run: their errors are logged and swallowed. */
export interface EventBus {
  /** Subscribe to one event name or `"*"`; returns the unsubscribe function. */
  subscribe(name: string, handler: EventHandler): () => void;
  /** Build and deliver an event outside any run. */
  emit(name: string, payload?: Record<string, unknown>): RuntimeEvent;
  /** Deliver an event already built (a run's log entry, with its sequence; its payload was checked). */
  publish(event: RuntimeEvent): void;
  getHistory(options?: { name?: string; limit?: number }): RuntimeEvent[];
  clearHistory(): void;
  /** Wait for handlers still running. */
  flush(): Promise<void>;
  close(): Promise<void>;
}
