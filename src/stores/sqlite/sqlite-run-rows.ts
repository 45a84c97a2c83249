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
import type { SqliteStatement, SqliteValue } from "./open-sqlite-database.js";

/** A cached prepared statement for a SQL text. */
export type PrepareStatement = (sql: string) => SqliteStatement;

/** The largest sequence or index a run's row can have: the low 32 bits of its rowid. */
export const MAX_POSITION = 0xffff_ffff;

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

/**
 * Insert events, skipping sequences already stored (a retried batch is harmless); `key` when known. Returns the
 * run's key.
 */
export function insertRunEvents(
  prepare: PrepareStatement,
  write: { runId: string; events: readonly RuntimeEvent[]; key?: number | undefined },
): number | undefined {
  const { runId, events } = write;
  if (events.length === 0) return write.key;
  for (const event of events) checkPosition(runId, "event sequence", event.sequence);
  const key = write.key ?? runKeyOf(prepare, runId);
  const params: SqliteValue[] = [key, SESSION_SCHEMA_VERSION];
  for (let start = 0; start < events.length; start += ROWS_PER_STATEMENT) {
    const count = Math.min(ROWS_PER_STATEMENT, events.length - start);
    params.length = 2;
    for (let index = start; index < start + count; index++) {
      const event = events[index]!;
      params.push(event.sequence, JSON.stringify(storedEventOf(event)));
    }
    prepare(insertSql("events", count)).run(...params);
  }
  return key;
}

/** Rows per insert statement: one statement per batch rather than per row is most of the saving. */
const ROWS_PER_STATEMENT = 16;

/**
 * The position one past the run's last row of `run_messages`, read as one seek to the end of the run's rowid
 * range (a `max()` over a range would visit every row of it). `?1` is the run's key.
 */
const STORED_LENGTH = `coalesce((SELECT (id & ${MAX_POSITION}) + 1 FROM run_messages
  WHERE id >= (?1 << 32) AND id < ((?1 + 1) << 32) ORDER BY id DESC LIMIT 1), 0)`;

/** How a batch of a run's rows is inserted: its events, its messages, or its messages as an append. */
type RowInsert = "events" | "messages" | "append";

/** SQL texts by insert and row count, so a commit neither rebuilds one nor hashes a new string to find it. */
const sqlTexts: Record<RowInsert, string[]> = { events: [], messages: [], append: [] };

/** The SQL text of `insert` for `count` rows; positions and bodies are bound in pairs after the fixed params. */
function insertSql(insert: RowInsert, count: number): string {
  const texts = sqlTexts[insert];
  let sql = texts[count];
  if (sql === undefined) {
    // ?1 is the run's key and ?2 the schema version; an append's ?3 is the stored length it expects.
    const first = insert === "append" ? 4 : 3;
    const pairs = Array.from({ length: count }, (_, i) => [`?${first + 2 * i}`, `?${first + 1 + 2 * i}`]);
    const columns = "(id, body, schema_version)";
    if (insert === "append") {
      // The rows go in only when the run's stored length is ?3: anything else (a rewrite, a gap) inserts
      // nothing and takes the checked way.
      const rows = pairs.map(([position, body]) => `(${position}, ${body})`).join(", ");
      sql = `INSERT INTO run_messages ${columns}
        SELECT (?1 << 32) | column1, column2, ?2 FROM (VALUES ${rows}) WHERE ${STORED_LENGTH} = ?3`;
    } else {
      const rows = pairs.map(([position, body]) => `((?1 << 32) | ${position}, ${body}, ?2)`).join(", ");
      const head = insert === "events" ? "INSERT OR IGNORE INTO run_events" : "INSERT INTO run_messages";
      sql = `${head} ${columns} VALUES ${rows}`;
    }
    texts[count] = sql;
  }
  return sql;
}

/**
 * Write a run's transcript from `fromIndex` on: the stored length is read under the transaction's write lock,
 * then the tail from `fromIndex` is deleted and the serialised messages inserted at their indexes. A gap throws
 * before anything is written. An append at the stored length, the usual write, is one statement that checks the
 * length itself. Returns the run's key when it has one, for the writes that follow; `key` when known.
 */
export function writeRunMessages(
  prepare: PrepareStatement,
  write: { runId: string; fromIndex: number; bodies: readonly string[]; key?: number | undefined },
): number | undefined {
  const { runId, fromIndex, bodies } = write;
  const existing = write.key ?? findRunKey(prepare, runId);
  if (existing !== undefined && appendMessages(prepare, { key: existing, fromIndex, bodies }))
    return existing;
  const stored =
    existing === undefined
      ? 0
      : Number(prepare(`SELECT ${STORED_LENGTH} AS length`).get(existing)?.length ?? 0);
  checkTranscriptIndex(runId, fromIndex, stored);
  checkPosition(runId, "message index", fromIndex + Math.max(0, bodies.length - 1));
  if (existing !== undefined && fromIndex < stored)
    prepare("DELETE FROM run_messages WHERE id >= ((?1 << 32) | ?2) AND id < ((?1 + 1) << 32)").run(
      existing,
      fromIndex,
    );
  if (bodies.length === 0) return existing;
  const key = existing ?? runKeyOf(prepare, runId);
  const params: SqliteValue[] = [key, SESSION_SCHEMA_VERSION];
  for (let start = 0; start < bodies.length; start += ROWS_PER_STATEMENT) {
    const count = Math.min(ROWS_PER_STATEMENT, bodies.length - start);
    params.length = 2;
    for (let index = start; index < start + count; index++) params.push(fromIndex + index, bodies[index]!);
    prepare(insertSql("messages", count)).run(...params);
  }
  return key;
}

/**
 * Append up to one statement's rows when `fromIndex` is the stored length; false when it wrote nothing (not an
 * append, too many rows, or an index the checked way must refuse with its own error).
 */
function appendMessages(
  prepare: PrepareStatement,
  append: { key: number; fromIndex: number; bodies: readonly string[] },
): boolean {
  const { key, fromIndex, bodies } = append;
  const count = bodies.length;
  if (count === 0 || count > ROWS_PER_STATEMENT) return false;
  if (!Number.isInteger(fromIndex) || fromIndex < 0 || fromIndex + count - 1 > MAX_POSITION) return false;
  const params: SqliteValue[] = [key, SESSION_SCHEMA_VERSION, fromIndex];
  for (let index = 0; index < count; index++) params.push(fromIndex + index, bodies[index]!);
  const result = prepare(insertSql("append", count)).run(...params);
  return Number(result.changes) === count;
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
