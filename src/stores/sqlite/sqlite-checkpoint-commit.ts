// A checkpoint commit as one statement: an insert into migration 5's view `checkpoint_commit_rows`, whose
// triggers write the run's new messages, its new events and the checkpoint. Run outside a transaction, that
// statement is its own transaction, so the commit is one call into the binding instead of five (BEGIN, three
// statements, COMMIT). That pays on libsql, where each call costs more than most of what SQLite then does for
// it, and not on node:sqlite, where the triggers' own work costs more than the calls it saves; the manager uses it
// on libsql only. Anything unusual — a run with no key yet, a transcript rewritten below its stored length, a
// batch too long — goes the checked way, in a transaction, as before.
import type { RuntimeEvent } from "../../contracts/runtime-event.js";
import { SESSION_SCHEMA_VERSION, type SessionCheckpoint } from "../../sessions/session-manager.js";
import { storedEventOf } from "../../sessions/session-records.js";
import type { SqliteValue } from "./open-sqlite-database.js";
import { TRANSCRIPT_MOVED } from "./sqlite-migrations.js";
import { MAX_POSITION } from "./sqlite-run-rows.js";

/** Messages and events one statement takes at most; a longer commit is rare and goes the checked way. */
const MAX_ROWS = 32;

/** The kinds of row of `checkpoint_commit_rows`, as migration 5's triggers tell them apart. */
const MESSAGE = 0;
const EVENT = 1;
const CHECKPOINT = 2;

/** What one checkpoint commit writes, serialised except for its events. */
export interface CheckpointCommitRows {
  /** The run's key when this manager knows it: only then is the commit written this way. */
  key: number | undefined;
  sessionId: string;
  checkpoint: SessionCheckpoint;
  /** The checkpoint's stored body. */
  body: string;
  /** The index of the first message. */
  fromIndex: number;
  /** The messages' stored bodies, or null when the transcript did not change. */
  bodies: readonly string[] | null;
  events: readonly RuntimeEvent[];
}

/** A statement and its params. */
export interface OneStatement {
  sql: string;
  params: SqliteValue[];
}

/**
 * The commit as one statement, or null when it must go the checked way: a run without a key yet, no messages to
 * append (an empty write may cut the transcript), events whose sequences do not follow one another, a message
 * index or event sequence a rowid cannot hold (refused there with its own error), or more rows than one
 * statement takes.
 */
export function checkpointCommitStatement(commit: CheckpointCommitRows): OneStatement | null {
  const { key, fromIndex, bodies, events, checkpoint } = commit;
  const messageCount = bodies?.length ?? 0;
  const count = messageCount + events.length;
  if (key === undefined || count > MAX_ROWS) return null;
  if (bodies !== null && !(messageCount > 0 && fits(fromIndex) && fits(fromIndex + messageCount - 1)))
    return null;
  const first = events[0]?.sequence ?? 0;
  for (let index = 0; index < events.length; index++) {
    if (events[index]!.sequence !== first + index) return null;
  }
  if (!fits(first) || !fits(first + Math.max(0, events.length - 1))) return null;
  const params: SqliteValue[] = [
    key,
    SESSION_SCHEMA_VERSION,
    commit.sessionId,
    checkpoint.checkpointId,
    commit.body,
    checkpoint.createdAt,
    fromIndex,
    first,
    messageCount,
  ];
  // Without rows the statement has no ?7 … ?9, and node:sqlite refuses params beyond its last.
  if (count === 0) params.length = 6;
  if (bodies !== null) for (const body of bodies) params.push(body);
  for (const event of events) params.push(JSON.stringify(storedEventOf(event)));
  return { sql: commitSql(count), params };
}

/** True when the one-statement commit was refused because the run's transcript is not at its `fromIndex`. */
export function isTranscriptMoved(error: unknown): boolean {
  return error instanceof Error && error.message.includes(TRANSCRIPT_MOVED);
}

function fits(position: number): boolean {
  return Number.isInteger(position) && position >= 0 && position <= MAX_POSITION;
}

/** SQL texts by row count, made once each. */
const sqlTexts: string[] = [];

/**
 * The insert of `count` rows, messages then events, and then the checkpoint's row. The params are the run's key
 * (?1), the schema version (?2), the checkpoint's session, id, body and time (?3 … ?6), the first message's index
 * (?7), the first event's sequence (?8), the number of messages (?9) and then one body a row: row `i` is a
 * message at ?7 + i when i < ?9, else an event at ?8 + i − ?9. A row's kind and position are worked out by
 * SQLite rather than bound, since every bound value costs the binding more than the arithmetic costs SQLite.
 */
function commitSql(count: number): string {
  let sql = sqlTexts[count];
  if (sql === undefined) {
    const rows = Array.from({ length: count }, (_, row) => {
      const kind = `CASE WHEN ${row} < ?9 THEN ${MESSAGE} ELSE ${EVENT} END`;
      const position = `CASE WHEN ${row} < ?9 THEN ?7 + ${row} ELSE ?8 + ${row} - ?9 END`;
      return `(${kind}, ?1, ${position}, ?${10 + row}, ?2, NULL, NULL, NULL)`;
    });
    rows.push(`(${CHECKPOINT}, NULL, NULL, ?5, ?2, ?3, ?4, ?6)`);
    sql = `INSERT INTO checkpoint_commit_rows
      (kind, run_key, position, body, schema_version, session_id, checkpoint_id, created_at)
      VALUES ${rows.join(", ")}`;
    sqlTexts[count] = sql;
  }
  return sql;
}
