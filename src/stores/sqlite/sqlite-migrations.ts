import { KeelError } from "../../errors/keel-error.js";
import type { SqliteDatabase } from "./open-sqlite-database.js";

/** One schema change of the SQLite store. */
export interface SqliteMigration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

/**
 * What migration 5's trigger aborts a one-statement checkpoint commit with when the run's transcript is not at the
 * length the commit appends at. It is part of that migration's SQL: files that applied it keep this text.
 */
export const TRANSCRIPT_MOVED = "keel: the stored transcript is not where the commit appends";

/** A trigger that gives a checkpoint written by `event` its session's row when the row is missing. */
function checkpointSessionTrigger(event: string): string {
  return `
    CREATE TRIGGER checkpoints_session_${event.toLowerCase()} AFTER ${event} ON checkpoints
    WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE session_id = NEW.session_id)
    BEGIN
      INSERT INTO sessions (session_id, state, schema_version, created_at, updated_at)
      VALUES (NEW.session_id, '{}', NEW.schema_version, NEW.created_at, NEW.created_at);
    END;`;
}

/**
 * The SQLite store's migrations, oldest first. Never edit one that has shipped: files that already applied it
 * would not see the change. Add a new version instead.
 */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    description: "sessions, messages, artifacts, checkpoints, runs, run events and session locks",
    // `ord INTEGER PRIMARY KEY AUTOINCREMENT` is SQLite's only auto-numbered column; upserts that hit the unique
    // key keep it, so a replaced checkpoint or run keeps its place in the list like a Map entry does.
    sql: `
      CREATE TABLE IF NOT EXISTS sessions (
        ord INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL UNIQUE,
        state TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS messages (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        body TEXT NOT NULL,
        schema_version INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS messages_session_idx ON messages (session_id, seq);
      CREATE TABLE IF NOT EXISTS artifacts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        name TEXT NOT NULL,
        body TEXT NOT NULL,
        schema_version INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS artifacts_session_idx ON artifacts (session_id, seq);
      CREATE TABLE IF NOT EXISTS checkpoints (
        ord INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        body TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (session_id, checkpoint_id)
      );
      CREATE TABLE IF NOT EXISTS runs (
        ord INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        status TEXT NOT NULL,
        body TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS runs_session_idx ON runs (session_id);
      CREATE INDEX IF NOT EXISTS runs_status_idx ON runs (status);
      CREATE TABLE IF NOT EXISTS run_events (
        run_id TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        body TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        PRIMARY KEY (run_id, sequence)
      );
      CREATE TABLE IF NOT EXISTS session_locks (
        session_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        pid INTEGER NOT NULL,
        acquired_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    description: "run transcripts",
    // One row per message at its index in the run's transcript; a rewrite deletes the tail and inserts again.
    sql: `
      CREATE TABLE IF NOT EXISTS run_messages (
        run_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        body TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        PRIMARY KEY (run_id, idx)
      );
    `,
  },
  {
    version: 3,
    description: "run events and transcripts keyed by rowid, checkpoints without AUTOINCREMENT",
    // A checkpoint commit wrote about nine 4 KiB pages to the WAL, most of them for b-trees it touched only to
    // keep them in step: each (run_id, n) primary key is a second b-tree beside its table, and AUTOINCREMENT
    // rewrites sqlite_sequence. Here a run gets a small integer key once, and its events and messages are rows
    // whose rowid is (run_key << 32) | sequence-or-index: one b-tree each, a run's rows side by side, and a
    // running run's rows appended at the end. A checkpoint's `ord` stays the rowid, still above every row in
    // the table when a new one is inserted, so the list keeps creation order and a replaced row keeps its place.
    sql: `
      CREATE TABLE run_keys (
        run_key INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL UNIQUE
      );
      INSERT INTO run_keys (run_id)
        SELECT run_id FROM (SELECT run_id FROM run_events UNION SELECT run_id FROM run_messages) ORDER BY run_id;
      CREATE TABLE run_events_v3 (
        id INTEGER PRIMARY KEY,
        body TEXT NOT NULL,
        schema_version INTEGER NOT NULL
      );
      INSERT INTO run_events_v3 (id, body, schema_version)
        SELECT (k.run_key << 32) | e.sequence, e.body, e.schema_version
        FROM run_events e JOIN run_keys k ON k.run_id = e.run_id;
      DROP TABLE run_events;
      ALTER TABLE run_events_v3 RENAME TO run_events;
      CREATE TABLE run_messages_v3 (
        id INTEGER PRIMARY KEY,
        body TEXT NOT NULL,
        schema_version INTEGER NOT NULL
      );
      INSERT INTO run_messages_v3 (id, body, schema_version)
        SELECT (k.run_key << 32) | m.idx, m.body, m.schema_version
        FROM run_messages m JOIN run_keys k ON k.run_id = m.run_id;
      DROP TABLE run_messages;
      ALTER TABLE run_messages_v3 RENAME TO run_messages;
      CREATE TABLE checkpoints_v3 (
        ord INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        body TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (session_id, checkpoint_id)
      );
      INSERT INTO checkpoints_v3 (ord, session_id, checkpoint_id, body, schema_version, created_at)
        SELECT ord, session_id, checkpoint_id, body, schema_version, created_at FROM checkpoints;
      DROP TABLE checkpoints;
      ALTER TABLE checkpoints_v3 RENAME TO checkpoints;
    `,
  },
  {
    version: 4,
    description: "a checkpoint's session row made by trigger",
    // A checkpoint belongs to a session that has a row in `sessions`. The store made sure of it with a statement
    // of its own before each checkpoint write; a trigger does the same check inside SQLite, in the same
    // transaction, without another call through the binding. It writes nothing when the row exists.
    sql: ["INSERT", "UPDATE"].map(checkpointSessionTrigger).join("\n"),
  },
  {
    version: 5,
    description: "a checkpoint commit as one statement: a view whose rows the triggers write to three tables",
    // One insert into this view is one statement, so in autocommit mode one transaction, and one call into the
    // binding instead of BEGIN, three statements and COMMIT. Each row is a message (kind 0), an event (kind 1) or
    // the checkpoint (kind 2) and goes where the store's own statements put it. A message goes in only at the
    // run's stored length: anything else aborts the whole statement with TRANSCRIPT_MOVED, and the store then
    // writes the commit the checked way. The WHEN clauses keep one trigger's work to its own kind of row.
    sql: `
      CREATE VIEW checkpoint_commit_rows AS
        SELECT NULL AS kind, NULL AS run_key, NULL AS position, NULL AS body, NULL AS schema_version,
               NULL AS session_id, NULL AS checkpoint_id, NULL AS created_at
        WHERE 0;
      CREATE TRIGGER checkpoint_commit_message INSTEAD OF INSERT ON checkpoint_commit_rows WHEN NEW.kind = 0
      BEGIN
        SELECT RAISE(ABORT, '${TRANSCRIPT_MOVED}')
        WHERE coalesce((SELECT (id & 4294967295) + 1 FROM run_messages
          WHERE id >= (NEW.run_key << 32) AND id < ((NEW.run_key + 1) << 32) ORDER BY id DESC LIMIT 1), 0)
          <> NEW.position;
        INSERT INTO run_messages (id, body, schema_version)
        VALUES ((NEW.run_key << 32) | NEW.position, NEW.body, NEW.schema_version);
      END;
      CREATE TRIGGER checkpoint_commit_event INSTEAD OF INSERT ON checkpoint_commit_rows WHEN NEW.kind = 1
      BEGIN
        INSERT OR IGNORE INTO run_events (id, body, schema_version)
        VALUES ((NEW.run_key << 32) | NEW.position, NEW.body, NEW.schema_version);
      END;
      CREATE TRIGGER checkpoint_commit_checkpoint INSTEAD OF INSERT ON checkpoint_commit_rows WHEN NEW.kind = 2
      BEGIN
        INSERT INTO checkpoints (session_id, checkpoint_id, body, schema_version, created_at)
        VALUES (NEW.session_id, NEW.checkpoint_id, NEW.body, NEW.schema_version, NEW.created_at)
        ON CONFLICT (session_id, checkpoint_id) DO UPDATE
        SET body = excluded.body, schema_version = excluded.schema_version, created_at = excluded.created_at;
      END;
    `,
  },
];

/**
 * Create `schema_migrations` if needed and apply the migrations the file lacks, in one `BEGIN IMMEDIATE`
 * transaction, so two processes opening a new file at once take turns and the second applies nothing. A file
 * migrated by a newer Keel is refused with `store.schema_version`. Returns the versions this call applied.
 */
export function migrateSqlite(
  db: SqliteDatabase,
  dbPath: string,
  migrations: readonly SqliteMigration[] = SQLITE_MIGRATIONS,
): number[] {
  return db.transaction(() => {
    db.exec(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version INTEGER PRIMARY KEY,
         applied_at TEXT NOT NULL
       )`,
    );
    const applied = new Set(
      db
        .prepare("SELECT version FROM schema_migrations")
        .all()
        .map((row) => Number(row.version)),
    );
    const known = Math.max(0, ...migrations.map((migration) => migration.version));
    const newest = Math.max(0, ...applied);
    if (newest > known) {
      throw new KeelError(
        `sqlite store: ${dbPath} is at schema version ${newest}, newer than this Keel knows (${known})`,
        {
          code: "store.schema_version",
          hint: "A newer Keel migrated this file; upgrade Keel, or point db_path at another file.",
          context: { dbPath, version: newest },
        },
      );
    }
    const done: number[] = [];
    const record = db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)");
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      db.exec(migration.sql);
      record.run(migration.version, new Date().toISOString());
      done.push(migration.version);
    }
    return done;
  });
}
