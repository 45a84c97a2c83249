import type { RunEventLog } from "../events/run-event-log.js";
import type { RuntimeEvent } from "../events/runtime-event.js";
import { chunkKindOf, type RunStreamChunk, toStreamChunk } from "./stream-chunk.js";

export interface ReadOptions {
  /** Only events after this sequence. */
  afterSequence?: number;
  /** Only these chunk kinds. */
  kinds?: readonly string[];
}

/**
 * Follow a live run's log from a sequence to its end. The consumer reads the log with its own cursor, so it
 * never holds the run back and sees every event once, in order.
 */
export async function* followLog(
  log: RunEventLog,
  options: ReadOptions = {},
): AsyncGenerator<RunStreamChunk> {
  const kinds = options.kinds ? new Set(options.kinds) : null;
  const events = log.events;
  let index = Math.max(0, (options.afterSequence ?? 0) - log.firstSequence + 1);
  for (;;) {
    while (index < events.length) {
      const event = events[index++]!;
      if (kinds === null || kinds.has(chunkKindOf(event.kind))) yield toStreamChunk(event);
    }
    if (log.closed) return;
    await log.next();
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
