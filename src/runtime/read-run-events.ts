import type { RuntimeEvent } from "../contracts/runtime-event.js";
import { RunEventsLostError } from "../errors/error-classes.js";
import type { RunEventLog } from "../events/run-event-log.js";
import { chunkKindOf, type RunStreamChunk, type RunStreamChunkKind, toStreamChunk } from "./stream-chunk.js";
import { wantedKinds } from "./stream-kinds.js";

export interface ReadOptions<K extends RunStreamChunkKind = RunStreamChunkKind> {
  /** Only events after this sequence. */
  afterSequence?: number;
  /** Only these chunk kinds, and `run.finished`, which ends every stream. */
  kinds?: readonly K[];
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/**
 * Follows a run's live log from a sequence to its end with a cursor of its own: it never holds the run back
 * and sees every event once, in order. A hand-written iterator rather than an async generator, because each
 * chunk through a generator costs a promise chain of its own (S2).
 */
export class RunChunkIterator implements AsyncIterableIterator<RunStreamChunk> {
  private log: RunEventLog | null = null;
  /** The sequence of the next event to read. */
  private cursor = 0;
  /** Stored events read back for a consumer that fell behind memory, and the next of them to give. */
  private behind: RuntimeEvent[] | null = null;
  private behindIndex = 0;
  private finished = false;
  private readonly kinds: ReadonlySet<string> | null;

  constructor(
    private readonly source: RunEventLog | (() => Promise<RunEventLog>),
    private readonly options: ReadOptions = {},
  ) {
    this.kinds = wantedKinds(options.kinds);
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
    const kinds = this.kinds;
    const behind = this.behind;
    if (behind !== null) {
      while (!this.finished && this.behindIndex < behind.length) {
        const event = behind[this.behindIndex++]!;
        this.cursor = event.sequence + 1;
        if (kinds === null || kinds.has(chunkKindOf(event.kind)))
          return Promise.resolve({ value: toStreamChunk(event), done: false });
      }
      this.behind = null;
    }
    // Memory let go of the events this consumer has yet to read: they are in the store.
    if (!this.finished && this.cursor < log.windowStart) return this.catchUp(log);
    const events = log.events;
    const start = log.windowStart;
    while (!this.finished && this.cursor - start < events.length) {
      const event = events[this.cursor - start]!;
      this.cursor++;
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
    this.cursor = Math.max(log.firstSequence, (this.options.afterSequence ?? 0) + 1);
  }

  /** Read the gap from the store; a gap the store cannot give ends the stream with an error, never a skip. */
  private async catchUp(log: RunEventLog): Promise<IteratorResult<RunStreamChunk, undefined>> {
    const from = this.cursor;
    const stored = await log.loadStored(from - 1);
    const first = stored.findIndex((event) => event.sequence >= from);
    if (first === -1 || stored[first]!.sequence !== from) {
      this.finished = true;
      throw new RunEventsLostError(
        `Events of run ${log.runId} from sequence ${from} are no longer in memory and the store does not have them`,
        {
          hint: "Read the stream faster, raise the agent's runtime.event_queue_size, or use a store that keeps run events",
          context: { runId: log.runId, fromSequence: from, windowStart: log.windowStart },
        },
      );
    }
    this.behind = stored;
    this.behindIndex = first;
    return this.next();
  }
}

/** Replay stored events as chunks. */
export function* replayEvents(
  events: readonly RuntimeEvent[],
  options: ReadOptions = {},
): Generator<RunStreamChunk> {
  const passes = kindFilter(options.kinds);
  const after = options.afterSequence ?? 0;
  for (const event of events) {
    if (event.sequence <= after) continue;
    if (passes(event.kind)) yield toStreamChunk(event);
  }
}

/** Whether an event of this kind is a chunk of a stream that asked for `kinds` (all of them when none). */
export function kindFilter(kinds: readonly string[] | undefined): (eventKind: string) => boolean {
  const wanted = wantedKinds(kinds);
  if (wanted === null) return () => true;
  return (eventKind) => wanted.has(chunkKindOf(eventKind));
}
