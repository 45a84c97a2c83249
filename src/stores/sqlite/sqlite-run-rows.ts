// How a run's events and transcript are laid out in SQLite rows. These run inside the caller's transaction.
import type { RuntimeEvent } from "../../contracts/runtime-event.js";
import { SESSION_SCHEMA_VERSION } from "../../sessions/session-manager.js";
import { checkTranscriptIndex, storedEventOf } from "../../sessions/session-records.js";
import type { SqliteStatement } from "./open-sqlite-database.js";

/** A cached prepared statement for a SQL text. */
export type PrepareStatement = (sql: string) => SqliteStatement;

/** Insert events, skipping sequences already stored (a retried batch is harmless). */
export function insertRunEvents(
  prepare: PrepareStatement,
  runId: string,
  events: readonly RuntimeEvent[],
): void {
  if (events.length === 0) return;
  const insert = prepare(
    "INSERT OR IGNORE INTO run_events (run_id, sequence, body, schema_version) VALUES (?, ?, ?, ?)",
  );
  for (const event of events) {
    const body = storedEventOf(event);
    insert.run(runId, event.sequence, JSON.stringify(body), SESSION_SCHEMA_VERSION);
  }
}

/**
 * Write a run's transcript from `fromIndex` on: the stored length is read under the transaction's write lock,
 * then the tail from `fromIndex` is deleted and the serialised messages inserted at their indexes. A gap throws
 * before anything is written.
 */
export function writeRunMessages(
  prepare: PrepareStatement,
  write: { runId: string; fromIndex: number; bodies: readonly string[] },
): void {
  const { runId, fromIndex, bodies } = write;
  const row = prepare("SELECT coalesce(max(idx) + 1, 0) AS length FROM run_messages WHERE run_id = ?").get(
    runId,
  );
  const stored = Number(row?.length ?? 0);
  checkTranscriptIndex(runId, fromIndex, stored);
  if (fromIndex < stored)
    prepare("DELETE FROM run_messages WHERE run_id = ? AND idx >= ?").run(runId, fromIndex);
  const insert = prepare("INSERT INTO run_messages (run_id, idx, body, schema_version) VALUES (?, ?, ?, ?)");
  for (let index = 0; index < bodies.length; index++) {
    insert.run(runId, fromIndex + index, bodies[index] as string, SESSION_SCHEMA_VERSION);
  }
}
