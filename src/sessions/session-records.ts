import type { RunRecord } from "../contracts/run-types.js";
import { RuntimeEvent } from "../contracts/runtime-event.js";
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

/** A run event as the SQL stores keep it in a row's body; its sequence is a column of the row. */
export interface StoredEvent {
  kind: string;
  runId: string;
  sessionId: string;
  agentId: string;
  timestampMs: number;
  payload: Record<string, unknown>;
}

/** An event's stored body. */
export function storedEventOf(event: RuntimeEvent): StoredEvent {
  return {
    kind: event.kind,
    runId: event.runId,
    sessionId: event.sessionId,
    agentId: event.agentId,
    timestampMs: event.timestampMs,
    payload: event.payload,
  };
}

/** An event read back from its stored body and its row's sequence. */
export function eventOfStored(body: StoredEvent, sequence: number): RuntimeEvent {
  return new RuntimeEvent(
    body.kind,
    body.payload,
    body.timestampMs,
    body.runId,
    body.sessionId,
    body.agentId,
    sequence,
  );
}
