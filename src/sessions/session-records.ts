import type { RunRecord } from "../contracts/run-types.js";
import type { RuntimeEvent } from "../contracts/runtime-event.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { KeelError } from "../errors/keel-error.js";
import { SESSION_SCHEMA_VERSION, type SessionCheckpoint } from "./session-manager.js";

/** Shared by every store: the record forms and lookups each of them would otherwise write again. */

/** A checkpoint as stored: stamped with the schema version and its creation time. */
export function stampCheckpoint(
  checkpoint: Omit<SessionCheckpoint, "schemaVersion" | "createdAt">,
): SessionCheckpoint {
  return {
    schemaVersion: SESSION_SCHEMA_VERSION,
    checkpointId: checkpoint.checkpointId,
    state: checkpoint.state,
    transcriptLength: checkpoint.transcriptLength,
    artifactCount: checkpoint.artifactCount,
    createdAt: new Date().toISOString(),
  };
}

/** A copy a caller may mutate without changing the stored record. */
export function copyRunRecord(record: RunRecord): RunRecord {
  return { ...record, pendingToolCalls: record.pendingToolCalls.slice() };
}

/** Index of the first event whose sequence is above `sequence`; the log's sequences ascend. */
export function firstEventAfter(log: readonly RuntimeEvent[], sequence: number): number {
  let low = 0;
  let high = log.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((log[middle] as RuntimeEvent).sequence <= sequence) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** `saveRunMessages` may rewrite the tail of a run's transcript but never leave a gap in it. */
export function checkTranscriptIndex(runId: string, fromIndex: number, storedLength: number): void {
  if (Number.isInteger(fromIndex) && fromIndex >= 0 && fromIndex <= storedLength) return;
  throw new KeelError(
    `Cannot write run ${runId}'s transcript at index ${fromIndex}: ${storedLength} message(s) are stored`,
    {
      code: ERROR_CODES.STORE_TRANSCRIPT_GAP,
      hint: "Write a run's messages from an index at or below the stored length (a checkpoint's transcriptLength)",
      context: { runId },
    },
  );
}
