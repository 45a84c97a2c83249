// How a run's events and transcript are laid out in SQLite rows. A run has a small integer key (`run_keys`);
// its event with sequence n is the `run_events` row whose rowid is (key << 32) | n, its message at index i the
// `run_messages` row (key << 32) | i. A commit then writes one b-tree per table instead of a table and its
// primary-key index, and a run's rows are read by a rowid range. The writers run inside the caller's
// transaction.
import type { RuntimeEvent } from "../../contracts/runtime-event.js";
import { ERROR_CODES } from "../../errors/error-codes.js";
import { KeelError } from "../../errors/keel-error.js";
import { SESSION_SCHEMA_VERSION } from "../../sessions/session-manager.js";
import { checkTranscriptIndex, storedEventOf } from "../../sessions/session-records.js";
import type { SqliteStatement } from "./open-sqlite-database.js";

/** A cached prepared statement for a SQL text. */
export type PrepareStatement = (sql: string) => SqliteStatement;

/** The largest sequence or index a run's row can have: the low 32 bits of its rowid. */
const MAX_POSITION = 0xffff_ffff;

/** A stored row of a run: its sequence or index, its JSON body and the body's schema version. */
export interface RunRow {
  position: number;
  body: unknown;
  schemaVersion: unknown;
}

/** The run's key, or undefined when it has stored nothing. */
function findRunKey(prepare: PrepareStatement, runId: string): number | undefined {
  const row = prepare("SELECT run_key FROM run_keys WHERE run_id = ?").get(runId);
  return row === undefined ? undefined : Number(row.run_key);
}

/** The run's key, given one on its first write. Inside a write transaction. */
function runKeyOf(prepare: PrepareStatement, runId: string): number {
  const found = findRunKey(prepare, runId);
  if (found !== undefined) return found;
  const row = prepare("INSERT INTO run_keys (run_id) VALUES (?) RETURNING run_key").get(runId);
  return Number(row?.run_key);
}

/** A sequence or index outside 0 … 2³²−1 would land in another run's rows: refused before anything is written. */
function checkPosition(runId: string, what: string, position: number): void {
  if (Number.isInteger(position) && position >= 0 && position <= MAX_POSITION) return;
  throw new KeelError(
    `sqlite store: run ${runId}'s ${what} ${position} is not an integer in 0 … ${MAX_POSITION}`,
    {
      code: ERROR_CODES.STORE_QUERY,
      hint: "The SQLite store keeps at most 2^32 events and messages per run; start a new run for more",
      context: { runId },
    },
  );
}

/** Insert events, skipping sequences already stored (a retried batch is harmless); `key` when known. */
export function insertRunEvents(
  prepare: PrepareStatement,
  write: { runId: string; events: readonly RuntimeEvent[]; key?: number | undefined },
): void {
  const { runId, events } = write;
  if (events.length === 0) return;
  for (const event of events) checkPosition(runId, "event sequence", event.sequence);
  const key = write.key ?? runKeyOf(prepare, runId);
  const rows = events.map((event) => ({
    position: event.sequence,
    body: JSON.stringify(storedEventOf(event)),
  }));
  insertRows(prepare, { verb: "INSERT OR IGNORE", table: "run_events", key, rows });
}

/** Rows per insert statement: one statement per batch rather than per row is most of the saving. */
const ROWS_PER_STATEMENT = 16;

/**
 * Insert rows of a run with as few statements as possible: each statement call crosses into the binding and
 * steps the VM once however many rows it carries. `INSERT OR IGNORE` skips each row already stored on its own.
 */
function insertRows(
  prepare: PrepareStatement,
  insert: {
    verb: "INSERT" | "INSERT OR IGNORE";
    table: "run_events" | "run_messages";
    key: number;
    rows: readonly { position: number; body: string }[];
  },
): void {
  const { verb, table, key, rows } = insert;
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const batch = rows.slice(start, start + ROWS_PER_STATEMENT);
    const values = batch.map((_, i) => `((?1 << 32) | ?${3 + 2 * i}, ?${4 + 2 * i}, ?2)`).join(", ");
    const params: (string | number)[] = [key, SESSION_SCHEMA_VERSION];
    for (const row of batch) params.push(row.position, row.body);
    prepare(`${verb} INTO ${table} (id, body, schema_version) VALUES ${values}`).run(...params);
  }
}

/**
 * Write a run's transcript from `fromIndex` on: the stored length is read under the transaction's write lock,
 * then the tail from `fromIndex` is deleted and the serialised messages inserted at their indexes. A gap throws
 * before anything is written. Returns the run's key when it has one, for the writes that follow.
 */
export function writeRunMessages(
  prepare: PrepareStatement,
  write: { runId: string; fromIndex: number; bodies: readonly string[] },
): number | undefined {
  const { runId, fromIndex, bodies } = write;
  const existing = findRunKey(prepare, runId);
  const stored =
    existing === undefined
      ? 0
      : Number(
          prepare(
            `SELECT coalesce((max(id) & ${MAX_POSITION}) + 1, 0) AS length FROM run_messages
             WHERE id >= (?1 << 32) AND id < ((?1 + 1) << 32)`,
          ).get(existing)?.length ?? 0,
        );
  checkTranscriptIndex(runId, fromIndex, stored);
  checkPosition(runId, "message index", fromIndex + Math.max(0, bodies.length - 1));
  if (existing !== undefined && fromIndex < stored)
    prepare("DELETE FROM run_messages WHERE id >= ((?1 << 32) | ?2) AND id < ((?1 + 1) << 32)").run(
      existing,
      fromIndex,
    );
  if (bodies.length === 0) return existing;
  const key = existing ?? runKeyOf(prepare, runId);
  const rows = bodies.map((body, index) => ({ position: fromIndex + index, body }));
  insertRows(prepare, { verb: "INSERT", table: "run_messages", key, rows });
  return key;
}

/** The run's rows of `table` from position `from` (an integer) up to `below` (exclusive), in order. */
export function loadRunRows(
  prepare: PrepareStatement,
  read: { table: "run_events" | "run_messages"; runId: string; from: number; below: number | null },
): RunRow[] {
  const from = Math.max(0, read.from);
  const below = read.below === null ? MAX_POSITION + 1 : Math.min(MAX_POSITION + 1, read.below);
  if (Number.isNaN(from) || from > MAX_POSITION || !(below > from)) return [];
  const key = findRunKey(prepare, read.runId);
  if (key === undefined) return [];
  return prepare(
    `SELECT id & ${MAX_POSITION} AS position, body, schema_version FROM ${read.table}
     WHERE id >= (?1 << 32) + ?2 AND id < (?1 << 32) + ?3 ORDER BY id`,
  )
    .all(key, from, below)
    .map((row) => ({ position: Number(row.position), body: row.body, schemaVersion: row.schema_version }));
}
