import type { RunEventLog } from "../events/run-event-log.js";
import type { RuntimeEvent } from "../events/runtime-event.js";
import { chunkKindOf, type RunStreamChunk, toStreamChunk } from "./stream-chunk.js";

export interface ReadOptions {
  /** Only events after this sequence. */
  afterSequence?: number;
  /** Only these chunk kinds. */
  kinds?: readonly string[];
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/**
 * Follows a run's live log from a sequence to its end with a cursor of its own: it never holds the run back
 * and sees every event once, in order. A hand-written iterator rather than an async generator, because each
 * chunk through a generator costs a promise chain of its own (S2).
 */
export class RunChunkIterator implements AsyncIterableIterator<RunStreamChunk> {
  private log: RunEventLog | null = null;
  private index = 0;
  private finished = false;
  private readonly kinds: ReadonlySet<string> | null;

  constructor(
    private readonly source: RunEventLog | (() => Promise<RunEventLog>),
    private readonly options: ReadOptions = {},
  ) {
    this.kinds = options.kinds ? new Set(options.kinds) : null;
    if (typeof source !== "function") this.attach(source);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<RunStreamChunk, undefined>> {
    const log = this.log;
    if (log === null) {
      if (this.finished) return Promise.resolve(DONE);
      return (this.source as () => Promise<RunEventLog>)().then((started) => {
        this.attach(started);
        return this.next();
      });
    }
    const events = log.events;
    const kinds = this.kinds;
    while (!this.finished && this.index < events.length) {
      const event = events[this.index++]!;
      if (kinds === null || kinds.has(chunkKindOf(event.kind)))
        return Promise.resolve({ value: toStreamChunk(event), done: false });
    }
    if (this.finished) return Promise.resolve(DONE);
    if (log.closed) {
      this.finished = true;
      // A run refused before it started has no `run.finished`: its reader gets the refusal instead.
      return log.refusal === undefined ? Promise.resolve(DONE) : Promise.reject(log.refusal);
    }
    return log.next().then(() => this.next());
  }

  /** Leaving early detaches; the run goes on. */
  return(): Promise<IteratorResult<RunStreamChunk, undefined>> {
    this.finished = true;
    return Promise.resolve(DONE);
  }

  private attach(log: RunEventLog): void {
    this.log = log;
    this.index = Math.max(0, (this.options.afterSequence ?? 0) - log.firstSequence + 1);
  }
}

/** Replay stored events as chunks. */
export function* replayEvents(
  events: readonly RuntimeEvent[],
  options: ReadOptions = {},
): Generator<RunStreamChunk> {
  const kinds = options.kinds ? new Set(options.kinds) : null;
  const after = options.afterSequence ?? 0;
  for (const event of events) {
    if (event.sequence <= after) continue;
    if (kinds === null || kinds.has(chunkKindOf(event.kind))) yield toStreamChunk(event);
  }
}
