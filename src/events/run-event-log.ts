import type { EventBus } from "./runtime-event.js";
import { RuntimeEvent } from "./runtime-event.js";

/**
 * The event log of one live run: every event gets the next `sequence`, is kept in order and delivered to the
 * event bus. Stream consumers read it with a cursor, so a slow consumer never slows the run and nothing is
 * copied per consumer.
 */
export class RunEventLog {
  readonly events: RuntimeEvent[] = [];
  private sequence: number;
  private waiting: { promise: Promise<void>; resolve: () => void } | null = null;
  private ended = false;
  private refused: unknown = undefined;

  constructor(
    readonly runId: string,
    readonly sessionId: string,
    readonly agentId: string,
    readonly bus: EventBus,
    /** The last sequence already used (a resumed run continues its numbering). */
    startAfter = 0,
    /** Events before this run's live part, kept so a consumer can replay from any sequence. */
    readonly firstSequence = startAfter + 1,
  ) {
    this.sequence = startAfter;
  }

  get lastSequence(): number {
    return this.sequence;
  }

  get closed(): boolean {
    return this.ended;
  }

  emit(kind: string, payload: Record<string, unknown>): RuntimeEvent {
    const event = new RuntimeEvent(
      kind,
      payload,
      Date.now(),
      this.runId,
      this.sessionId,
      this.agentId,
      ++this.sequence,
    );
    this.events.push(event);
    this.bus.publish(event);
    const waiting = this.waiting;
    if (waiting !== null) {
      this.waiting = null;
      waiting.resolve();
    }
    return event;
  }

  /** Resolves at the next event or when the log closes. */
  next(): Promise<void> {
    if (this.ended) return Promise.resolve();
    if (this.waiting === null) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      this.waiting = { promise, resolve };
    }
    return this.waiting.promise;
  }

  /** Why the run never started (a refused resume); its log then ends without `run.finished`. */
  get refusal(): unknown {
    return this.refused;
  }

  /** No more events will come (the run finished or was suspended, or was refused before it started). */
  close(refusal?: unknown): void {
    if (refusal !== undefined) this.refused = refusal;
    this.ended = true;
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.resolve();
  }

  /** The events this log holds with a sequence above `sequence`, in order (a new array). */
  eventsAfter(sequence: number): RuntimeEvent[] {
    return this.events.slice(Math.max(0, sequence - this.firstSequence + 1));
  }

  /** The event with this sequence, if this log holds it. */
  at(sequence: number): RuntimeEvent | undefined {
    return this.events[sequence - this.firstSequence];
  }
}
