import type { RuntimeEvent } from "../contracts/runtime-event.js";
import { UnknownRunError } from "../errors/error-classes.js";
import type { RunEventFanout } from "../queue/run-queue.js";
import type { RunStore } from "../sessions/session-manager.js";
import { kindFilter, type ReadOptions } from "./read-run-events.js";
import { type RunStreamChunk, toStreamChunk } from "./stream-chunk.js";

/** How long a follower waits for a notification before it looks again anyway. */
const POLL_MS = 1000;

/**
 * Follow a run that another process executes: its stored events after the sequence first, then its live tail
 * from the queue's fan-out, each event once and in order, to its `run.finished` (of the continuation, for a run
 * that waits when this is called). Events are taken strictly in sequence: what the tail lacks (trimmed, or lost
 * with a Redis restart) is read from the store, which holds every event once a checkpoint or the run's end wrote
 * it; an event the tail repeats (a worker that took the run over numbers on from the store) is skipped.
 */
export async function* followAcrossNodes(
  runId: string,
  options: ReadOptions & { store: Promise<RunStore>; fanout: RunEventFanout },
): AsyncGenerator<RunStreamChunk> {
  const store = await options.store;
  const { fanout } = options;
  const record = await store.getRun(runId);
  if (record === null)
    throw new UnknownRunError(`Unknown run '${runId}'`, {
      hint: "`keel runs <config>` lists the runs the store knows (`runtime.listRuns()` in code)",
    });
  const waitedAfter = record.status === "waiting" ? record.lastSequence : null;
  const passes = kindFilter(options.kinds);
  const ends = (event: RuntimeEvent) =>
    event.kind === "run.finished" && (waitedAfter === null || event.sequence > waitedAfter);
  let after = options.afterSequence ?? 0;
  let position = "0";
  let changed = true;
  let wake: (() => void) | null = null;
  const unwatch = fanout.watch(runId, () => {
    changed = true;
    wake?.();
  });
  try {
    for (const event of await store.loadEvents(runId, { afterSequence: after })) {
      after = event.sequence;
      if (passes(event.kind)) yield toStreamChunk(event);
      if (ends(event)) return;
    }
    // A finished run's store holds all of it.
    if (record.status === "done") return;
    for (;;) {
      changed = false;
      let gap = false;
      let read = 0;
      for (const entry of await fanout.read(runId, position)) {
        const { event } = entry;
        if (event.sequence > after + 1) {
          gap = true;
          break;
        }
        position = entry.position;
        if (event.sequence <= after) continue;
        read++;
        after = event.sequence;
        if (passes(event.kind)) yield toStreamChunk(event);
        if (ends(event)) return;
      }
      if (gap || read === 0) {
        for (const event of await store.loadEvents(runId, { afterSequence: after })) {
          if (event.sequence !== after + 1) break;
          after = event.sequence;
          if (passes(event.kind)) yield toStreamChunk(event);
          if (ends(event)) return;
        }
        const now = await store.getRun(runId);
        if (now === null || (now.status === "done" && now.lastSequence <= after)) return;
      }
      if (!changed)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      wake = null;
    }
  } finally {
    unwatch();
  }
}
