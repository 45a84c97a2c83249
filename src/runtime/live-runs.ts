import type { RunResult } from "../contracts/run-types.js";
import { UnknownRunError } from "../errors/error-classes.js";
import type { RunEventLog } from "../events/run-event-log.js";
import type { CancelScope } from "../loop/cancel-scope.js";
import type { RunStore } from "../sessions/session-manager.js";
import { kindFilter, type ReadOptions, RunChunkIterator, replayEvents } from "./read-run-events.js";
import { type RunStreamChunk, toStreamChunk } from "./stream-chunk.js";

/** A run this process is executing. */
export interface LiveRun {
  readonly log: RunEventLog;
  readonly scope: CancelScope;
  readonly done: Promise<RunResult>;
  /** The token of the session scope it holds, once it holds it (a child run of its session re-enters with it). */
  readonly session: { token?: symbol };
}

/**
 * The runs this process is executing, by id, and the readers that wait for a waiting run to start again here:
 * what `attach` follows, whether the run is live here, stored, or both in turn.
 */
export class LiveRuns {
  private readonly runs = new Map<string, LiveRun>();
  /** `attach()` calls waiting for a waiting run to be resumed in this process. */
  private readonly startWaiters = new Map<string, (() => void)[]>();

  get(runId: string): LiveRun | undefined {
    return this.runs.get(runId);
  }

  has(runId: string): boolean {
    return this.runs.has(runId);
  }

  values(): IterableIterator<LiveRun> {
    return this.runs.values();
  }

  /** A run starts here: readers waiting for it follow it from now on. */
  add(runId: string, live: LiveRun): void {
    this.runs.set(runId, live);
    const waiters = this.startWaiters.get(runId);
    if (waiters !== undefined) {
      this.startWaiters.delete(runId);
      for (const resolve of waiters) resolve();
    }
  }

  delete(runId: string): void {
    this.runs.delete(runId);
  }

  /**
   * Replay a run's stored events after a sequence, then follow it live until it ends: a run live here is read
   * from its log (its part before this process took it over from the store), a stored one from the store, and a
   * waiting one is waited for until a decision starts it here again. Whether the run waits is settled by its state
   * at this call, not when reading starts: the stream of a waiting run ends at the `run.finished` of the
   * continuation the next decision starts, even when that decision comes before the first `next()`.
   */
  follow(
    runId: string,
    options: ReadOptions & { store: Promise<RunStore> },
  ): AsyncIterableIterator<RunStreamChunk> {
    const live = this.runs.get(runId);
    const waitingSince =
      live !== undefined
        ? Promise.resolve(suspendedAt(live.log))
        : options.store
            .then((store) => store.getRun(runId))
            .then((record) => (record?.status === "waiting" ? record.lastSequence : null));
    // Read now, so that a decision made right after this call cannot go before it; its failure is the stream's.
    waitingSince.catch(noop);
    return this.read(runId, { ...options, waitingSince });
  }

  private async *read(
    runId: string,
    options: ReadOptions & { store: Promise<RunStore>; waitingSince: Promise<number | null> },
  ): AsyncGenerator<RunStreamChunk> {
    const store = await options.store;
    // A run that waited: the sequence of its last event then. The first `run.finished` after it ends the stream.
    let waitedAfter = await options.waitingSince;
    const passes = kindFilter(options.kinds);
    let after = options.afterSequence ?? 0;
    for (;;) {
      const live = this.runs.get(runId);
      if (live !== undefined) {
        if (waitedAfter !== null && live.log.closed && live.log.lastSequence <= waitedAfter) {
          // The part of the run that suspended has yet to leave this process; its continuation comes after it.
          await live.done.then(noop, noop);
          continue;
        }
        yield* this.readLive(live, { ...options, afterSequence: after, store });
        return;
      }
      const record = await store.getRun(runId);
      if (!record)
        throw new UnknownRunError(`Unknown run '${runId}'`, {
          hint: "`keel runs <config>` lists the runs the store knows (`runtime.listRuns()` in code)",
        });
      for (const event of await store.loadEvents(runId, { afterSequence: after })) {
        after = event.sequence;
        if (passes(event.kind)) yield toStreamChunk(event);
        if (waitedAfter !== null && event.sequence > waitedAfter && event.kind === "run.finished") return;
      }
      if (this.runs.has(runId)) continue;
      if (record.status !== "waiting") return;
      // The run may have been resumed (and even finished) since its record was read: read it again before
      // waiting, and go round once more if anything moved.
      const again = await store.getRun(runId);
      if (this.runs.has(runId) || again?.status !== "waiting" || again.updatedAt !== record.updatedAt)
        continue;
      // A run that went to waiting while it was followed is followed into its continuation too.
      waitedAfter ??= Math.max(after, record.lastSequence);
      await new Promise<void>((resolve) => {
        let waiting = this.startWaiters.get(runId);
        if (waiting === undefined) {
          waiting = [];
          this.startWaiters.set(runId, waiting);
        }
        waiting.push(resolve);
      });
    }
  }

  /** A run live here, from a sequence to the end of its log: the part before its log began is in the store. */
  private async *readLive(
    live: LiveRun,
    options: ReadOptions & { afterSequence: number; store: RunStore },
  ): AsyncGenerator<RunStreamChunk> {
    const { log } = live;
    let after = options.afterSequence;
    if (after < log.firstSequence - 1) {
      for (const chunk of replayEvents(
        await options.store.loadEvents(log.runId, { afterSequence: after }),
        options,
      )) {
        if (chunk.sequence >= log.firstSequence) break;
        yield chunk;
      }
      after = log.firstSequence - 1;
    }
    yield* new RunChunkIterator(log, { ...options, afterSequence: after });
  }
}

/** The sequence of a finished log's last event when the run suspended there; null for any other log. */
function suspendedAt(log: RunEventLog): number | null {
  if (!log.closed) return null;
  const last = log.at(log.lastSequence);
  if (last?.kind !== "run.finished") return null;
  return (last.payload.result as RunResult | undefined)?.stopReason === "suspended" ? last.sequence : null;
}

function noop(): void {}
