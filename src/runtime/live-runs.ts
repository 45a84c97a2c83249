import type { RunResult } from "../contracts/run-types.js";
import { UnknownRunError } from "../errors/error-classes.js";
import type { RunEventLog } from "../events/run-event-log.js";
import type { CancelScope } from "../loop/cancel-scope.js";
import type { RunStore } from "../sessions/session-manager.js";
import { type ReadOptions, RunChunkIterator, replayEvents } from "./read-run-events.js";
import type { RunStreamChunk } from "./stream-chunk.js";

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
   * waiting one is waited for until a decision starts it here again.
   */
  async *follow(runId: string, options: ReadOptions, store: RunStore): AsyncGenerator<RunStreamChunk> {
    let after = options.afterSequence ?? 0;
    for (;;) {
      const live = this.runs.get(runId);
      if (live !== undefined) {
        // The part of the log before this process took the run over is in the store.
        if (after < live.log.firstSequence - 1) {
          for (const chunk of replayEvents(
            await store.loadEvents(runId, { afterSequence: after }),
            options,
          )) {
            if (chunk.sequence >= live.log.firstSequence) break;
            yield chunk;
          }
          after = live.log.firstSequence - 1;
        }
        yield* new RunChunkIterator(live.log, { ...options, afterSequence: after });
        return;
      }
      const record = await store.getRun(runId);
      if (!record)
        throw new UnknownRunError(`Unknown run '${runId}'`, {
          hint: "`keel runs <config>` lists the runs the store knows (`runtime.listRuns()` in code)",
        });
      const stored = await store.loadEvents(runId, { afterSequence: after });
      if (stored.length > 0) after = stored[stored.length - 1]!.sequence;
      yield* replayEvents(stored, options);
      if (this.runs.has(runId)) continue;
      if (record.status !== "waiting") return;
      // The run may have been resumed (and even finished) since its record was read: read it again before
      // waiting, and go round once more if anything moved.
      const again = await store.getRun(runId);
      if (this.runs.has(runId) || again?.status !== "waiting" || again.updatedAt !== record.updatedAt)
        continue;
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
}
