import { type EventBus, RuntimeEvent } from "../contracts/runtime-event.js";
import { getLogger } from "../logging/logger.js";
import { hasSecrets, redactSecretsIn } from "../logging/redact-secrets.js";

/** Where a live log keeps the events it lets go of: the store's event log of the run (and its folder). */
export interface RunEventSpill {
  /** At most this many events stay in memory while the run goes on (the agent's `event_queue_size`). */
  readonly limit: number;
  /** Store these events, in order; the log lets go of them only once this resolves. */
  append(events: readonly RuntimeEvent[]): Promise<void>;
  /** The stored events after `sequence`, in order: what a consumer that fell behind reads. */
  load(afterSequence: number): Promise<RuntimeEvent[]>;
}

/**
 * The event log of one live run: every event gets the next `sequence`, is kept in order and delivered to the
 * event bus. Stream consumers read it with a cursor, so a slow consumer never slows the run and nothing is
 * copied per consumer. With a spill (`spillTo`), only the recent events stay in memory: older ones are stored
 * first and then dropped, so a consumer that falls further behind continues from the store.
 */
export class RunEventLog {
  /** The events held in memory, oldest first: `events[0]` has sequence `windowStart`. */
  readonly events: RuntimeEvent[] = [];
  private sequence: number;
  private waiting: { promise: Promise<void>; resolve: () => void } | null = null;
  private ended = false;
  private start: number;
  private spill: RunEventSpill | null = null;
  /** The last sequence the spill stored; only events up to it may leave memory. */
  private spilled = 0;
  /** Spill when `events` reaches this length (no spill: never). */
  private spillAt = Number.POSITIVE_INFINITY;
  private storing: Promise<void> | null = null;
  private spillFailed = false;
  private refused: unknown = undefined;

  readonly runId: string;
  readonly sessionId: string;
  readonly agentId: string;
  /** Events before this run's live part, kept so a consumer can replay from any sequence. */
  readonly firstSequence: number;

  constructor(
    run: { runId: string; sessionId: string; agentId: string },
    readonly bus: EventBus,
    /** The last sequence already used (a resumed run continues its numbering). */
    startAfter = 0,
  ) {
    this.runId = run.runId;
    this.sessionId = run.sessionId;
    this.agentId = run.agentId;
    this.firstSequence = startAfter + 1;
    this.sequence = startAfter;
    this.start = startAfter + 1;
    this.spilled = startAfter;
  }

  get lastSequence(): number {
    return this.sequence;
  }

  get closed(): boolean {
    return this.ended;
  }

  /** The sequence of the oldest event still in memory (the next one's when memory holds none). */
  get windowStart(): number {
    return this.start;
  }

  /** The last sequence the spill stored (and its folder holds); `startAfter` before any spill. */
  get spilledSequence(): number {
    return this.spilled;
  }

  /**
   * Keep at most `spill.limit` events in memory from now on. Older events are stored in batches (a quarter of
   * the limit at a time, so the run pays one store write per batch, not per event) and then dropped.
   */
  spillTo(spill: RunEventSpill): void {
    this.spill = spill;
    this.spillAt = Math.max(1, Math.floor((spill.limit * 3) / 4));
    if (this.events.length >= this.spillAt) this.startSpill();
  }

  /**
   * `timestampMs` lets a caller that emits two events in one synchronous stretch give the second the first's
   * time: a clock read costs about as much as the rest of an event, and the two would read the same millisecond.
   */
  emit(kind: string, payload: Record<string, unknown>, timestampMs: number = Date.now()): RuntimeEvent {
    const event = new RuntimeEvent(
      kind,
      hasSecrets() ? redactErrorFields(payload) : payload,
      timestampMs,
      this.runId,
      this.sessionId,
      this.agentId,
      ++this.sequence,
    );
    this.events.push(event);
    if (this.events.length >= this.spillAt && this.storing === null) this.startSpill();
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

  /** A batch of events is on its way to the store: `settled()` waits for it. */
  get spilling(): boolean {
    return this.storing !== null;
  }

  /** Resolves once no spill is under way: what is stored up to `spilledSequence` is then in the store. */
  async settled(): Promise<void> {
    while (this.storing !== null) await this.storing;
  }

  /**
   * The events this log holds in memory with a sequence above `sequence`, in order (a new array). Events that
   * left memory are not among them; they are in the store.
   */
  eventsAfter(sequence: number): RuntimeEvent[] {
    return this.events.slice(Math.max(0, sequence - this.start + 1));
  }

  /** The event with this sequence, if memory holds it. */
  at(sequence: number): RuntimeEvent | undefined {
    return sequence < this.start ? undefined : this.events[sequence - this.start];
  }

  /** The stored events after `sequence`, for a consumer behind `windowStart`; empty without a spill. */
  loadStored(afterSequence: number): Promise<RuntimeEvent[]> {
    return this.spill === null ? Promise.resolve([]) : this.spill.load(afterSequence);
  }

  private startSpill(): void {
    const spill = this.spill!;
    const batch = this.eventsAfter(this.spilled);
    if (batch.length === 0) return;
    const last = batch[batch.length - 1]!.sequence;
    this.storing = spill.append(batch).then(
      () => {
        this.storing = null;
        this.spilled = last;
        this.trim(spill.limit);
        if (this.events.length >= this.spillAt) this.startSpill();
      },
      (error: unknown) => {
        this.storing = null;
        // The events stay in memory (nothing is lost) and the next try waits for another batch's worth.
        this.spillAt = this.events.length + Math.max(1, Math.floor(spill.limit / 4));
        if (!this.spillFailed) {
          this.spillFailed = true;
          getLogger().warn(
            `Could not store events of run ${this.runId} while it runs; they stay in memory: ${(error as Error).message}`,
          );
        }
      },
    );
  }

  /** Drop stored events from memory down to half the limit: room for a batch before the next spill. */
  private trim(limit: number): void {
    const keep = Math.max(1, Math.floor(limit / 2));
    const stored = this.spilled - this.start + 1;
    const drop = Math.min(stored, this.events.length - keep);
    if (drop <= 0) return;
    this.events.splice(0, drop);
    this.start += drop;
    this.spillAt = Math.max(1, Math.floor((limit * 3) / 4));
  }
}

/**
 * The payload with known secrets redacted from what carries an error's text (`error`, `errorDetails`, a
 * result's `error`); other fields, streamed text above all, are not scanned on this hot path.
 */
function redactErrorFields(payload: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | null = null;
  for (const key of ["error", "errorDetails", "message", "reason"]) {
    const value = payload[key];
    if (value === undefined) continue;
    const redacted = redactSecretsIn(value);
    if (redacted !== value) {
      copy ??= { ...payload };
      copy[key] = redacted;
    }
  }
  const result = payload.result;
  if (typeof result === "object" && result !== null && "errorDetails" in result) {
    const redacted = redactErrorFields(result as Record<string, unknown>);
    if (redacted !== result) {
      copy ??= { ...payload };
      copy.result = redacted;
    }
  }
  return copy ?? payload;
}
