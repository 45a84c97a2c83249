// The session-store seam over one SQLite file: one method per SessionManager call; how a run's events and
// transcript are laid out in rows is in sqlite-run-rows.ts.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Message } from "../../contracts/message.js";
import type { RunRecord, RunStatus } from "../../contracts/run-types.js";
import type { RuntimeEvent } from "../../contracts/runtime-event.js";
import { enterSessionScope, type HeldScope } from "../../sessions/enter-session-scope.js";
import { DEFAULT_SESSION_QUEUE_SIZE, SessionLock } from "../../sessions/session-lock.js";
import {
  type CheckpointCommit,
  type CheckpointCommitter,
  SESSION_SCHEMA_VERSION,
  type SessionArtifact,
  type SessionCheckpoint,
  type SessionManager,
  type SessionScope,
  type SessionScopeOptions,
} from "../../sessions/session-manager.js";
import { eventOfStored, type StoredEvent, stampCheckpoint } from "../../sessions/session-records.js";
import type { StoreOutageWait } from "../../sessions/store-outage.js";
import { transcriptBound } from "../../sessions/transcript-bound.js";
import { acquireSessionLockRow, makeLockOwner } from "./acquire-session-lock-row.js";
import { checkSqliteRow, type SqliteRowLocation } from "./check-sqlite-row.js";
import {
  enableWal,
  openSqliteDatabase,
  type SqliteBindingName,
  type SqliteDatabase,
  type SqliteModuleImporter,
  type SqliteStatement,
} from "./open-sqlite-database.js";
import {
  checkpointCommitStatement,
  isTranscriptMoved,
  type OneStatement,
} from "./sqlite-checkpoint-commit.js";
import { migrateSqlite } from "./sqlite-migrations.js";
import { SqliteRunKeys } from "./sqlite-run-keys.js";
import { insertRunEvents, loadRunRows, writeRunMessages } from "./sqlite-run-rows.js";
import {
  checkSynchronous,
  type SqliteSessionManagerOptions,
  type SqliteSynchronous,
} from "./sqlite-session-manager-options.js";
import { sqliteStoreClosedError, toSqliteStoreError } from "./to-sqlite-store-error.js";

/**
 * Session store in one SQLite file (type `sqlite`): any process opening the same file can resume any run.
 * `session()` is exclusive across processes: a {@link SessionLock} queues this process's callers FIFO, and the
 * one at the front then holds a row in `session_locks` for the whole scope (see `acquireSessionLockRow`).
 * Every write is a `BEGIN IMMEDIATE` transaction, or one statement that is a transaction by itself, waiting up
 * to `busyTimeoutMs` for the file's write lock, so concurrent writers are serialised by SQLite itself.
 */
export class SqliteSessionManager implements SessionManager, CheckpointCommitter {
  private readonly lock = new SessionLock();
  private readonly held = new Map<string, HeldScope>();
  private readonly statements = new Map<string, SqliteStatement>();
  private readonly runKeys = new SqliteRunKeys();
  private readonly owner = makeLockOwner();
  private readonly dbPath: string;
  private readonly wal: boolean;
  private readonly synchronous: SqliteSynchronous;
  private readonly busyTimeoutMs: number;
  private readonly queueSize: number;
  private readonly binding: "auto" | SqliteBindingName;
  private readonly importer: SqliteModuleImporter | undefined;
  private db: SqliteDatabase | undefined;
  private opening: Promise<SqliteDatabase> | undefined;
  private closed = false;

  constructor(options: SqliteSessionManagerOptions) {
    this.dbPath = options.dbPath;
    this.wal = options.wal ?? true;
    this.synchronous = checkSynchronous(options.synchronous ?? "NORMAL");
    this.busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000));
    this.queueSize = options.queueSize ?? DEFAULT_SESSION_QUEUE_SIZE;
    this.binding = options.binding ?? "auto";
    this.importer = options.importer;
  }

  /** Build a manager and open and migrate the file now, so a missing binding or a bad path fails here. */
  static async open(options: SqliteSessionManagerOptions): Promise<SqliteSessionManager> {
    const manager = new SqliteSessionManager(options);
    try {
      await manager.ready();
    } catch (error) {
      await manager.close();
      throw error;
    }
    return manager;
  }

  /** The binding in use once opened (`node:sqlite` or `libsql`), else undefined. */
  get bindingName(): SqliteBindingName | undefined {
    return this.db?.binding;
  }

  /** Load the binding, open the file and migrate it; later calls share the first one's outcome. */
  ready(): Promise<SqliteDatabase> {
    if (this.closed) return Promise.reject(sqliteStoreClosedError());
    this.opening ??= this.openDatabase().catch((error: unknown) => {
      // Let a later call try again: the package may have been installed, the directory made.
      this.opening = undefined;
      throw toSqliteStoreError(error, this.dbPath, "open");
    });
    return this.opening;
  }

  /** Run `fn` holding the session in every process; the scope's state is loaded first and written back after. */
  session<T>(
    sessionId: string,
    fn: (scope: SessionScope) => Promise<T>,
    options: SessionScopeOptions = {},
  ): Promise<T> {
    return enterSessionScope({
      lock: this.lock,
      held: this.held,
      sessionId,
      fn,
      options,
      defaultQueueSize: this.queueSize,
      hold: (token) =>
        this.holdSession({ sessionId, token, signal: options.signal, outage: options.outage }, fn),
    });
  }

  /** Take the session's lock row, load its state, run `fn`, write the state back, let go of the row. */
  private async holdSession<T>(
    hold: {
      sessionId: string;
      token: symbol;
      signal: AbortSignal | undefined;
      outage: StoreOutageWait | undefined;
    },
    fn: (scope: SessionScope) => Promise<T>,
  ): Promise<T> {
    const { sessionId, token, signal, outage } = hold;
    // The writes that end the scope wait out a busy or full disk when the caller said how long to wait.
    const settle = (operation: string, work: () => void): Promise<void> =>
      outage === undefined ? Promise.resolve().then(work) : outage.run(operation, async () => work());
    const db = await this.ready();
    const unlock = await acquireSessionLockRow(db, sessionId, { owner: this.owner, signal }).catch(
      (error: unknown) => {
        // The signal's reason is the caller's own value and must come back unchanged.
        if (signal?.aborted && error === signal.reason) throw error;
        throw toSqliteStoreError(error, this.dbPath, "session lock");
      },
    );
    try {
      const state = this.write("session load", () => {
        this.ensureSession(sessionId);
        const row = this.stmt("SELECT state, schema_version FROM sessions WHERE session_id = ?").get(
          sessionId,
        );
        return this.parse<Record<string, unknown>>(row?.schema_version, row?.state, {
          table: "sessions",
          key: sessionId,
        });
      });
      this.held.set(sessionId, { token, state });
      try {
        let result: T;
        try {
          result = await fn({ sessionId, state, token });
        } catch (error) {
          // Like the in-memory store, a failed scope still persists what it changed before failing.
          // The scope's own error is the one to report.
          await settle("session save", () => this.saveScopeState(sessionId, state)).catch(() => {});
          throw error;
        }
        await settle("session save", () => this.saveScopeState(sessionId, state));
        return result;
      } finally {
        this.held.delete(sessionId);
      }
    } finally {
      // The row outlives a crash only until another process sees our pid is gone.
      if (!this.closed) await settle("session unlock", () => this.write("session unlock", unlock));
    }
  }

  /** A copy of the session's state; `{}` for an unknown session. */
  async getState(sessionId: string): Promise<Record<string, unknown>> {
    await this.ready();
    return this.run("getState", () => {
      const row = this.stmt("SELECT state, schema_version FROM sessions WHERE session_id = ?").get(sessionId);
      if (row === undefined) return {};
      return this.parse<Record<string, unknown>>(row.schema_version, row.state, {
        table: "sessions",
        key: sessionId,
      });
    });
  }

  /** Replace the session's state. */
  async setState(sessionId: string, state: Record<string, unknown>): Promise<void> {
    await this.ready();
    const now = new Date().toISOString();
    this.write("setState", () =>
      this.stmt(
        `INSERT INTO sessions (session_id, state, schema_version, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (session_id) DO UPDATE
         SET state = excluded.state, schema_version = excluded.schema_version, updated_at = excluded.updated_at`,
      ).run(sessionId, JSON.stringify(state), SESSION_SCHEMA_VERSION, now, now),
    );
  }

  /** Forget the session's state, messages, artifacts and checkpoints in one transaction; its runs stay. */
  async deleteSession(sessionId: string): Promise<void> {
    await this.ready();
    this.write("deleteSession", () => {
      for (const table of ["messages", "artifacts", "checkpoints", "sessions"]) {
        this.stmt(`DELETE FROM ${table} WHERE session_id = ?`).run(sessionId);
      }
    });
  }

  /** Sessions with any stored data, oldest first. */
  async listSessions(): Promise<string[]> {
    await this.ready();
    return this.run("listSessions", () =>
      this.stmt("SELECT session_id FROM sessions ORDER BY ord")
        .all()
        .map((row) => String(row.session_id)),
    );
  }

  /** Append a message to the session's transcript. */
  async appendMessage(sessionId: string, message: Message): Promise<void> {
    await this.appendMessages(sessionId, [message]);
  }

  /** Append messages in order in one transaction, so a batch lands whole or not at all. */
  async appendMessages(sessionId: string, messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return;
    await this.ready();
    this.write("appendMessages", () => {
      this.ensureSession(sessionId);
      const insert = this.stmt("INSERT INTO messages (session_id, body, schema_version) VALUES (?, ?, ?)");
      for (const message of messages) insert.run(sessionId, JSON.stringify(message), SESSION_SCHEMA_VERSION);
    });
  }

  /** The session's transcript in order. */
  async loadMessages(sessionId: string): Promise<Message[]> {
    return this.loadBodies<Message>("messages", sessionId);
  }

  /** Add an artifact to the session. */
  async saveArtifact(sessionId: string, artifact: SessionArtifact): Promise<void> {
    await this.ready();
    const body = JSON.stringify({ ...artifact, kind: artifact.kind ?? "generic" });
    this.write("saveArtifact", () => {
      this.ensureSession(sessionId);
      this.stmt("INSERT INTO artifacts (session_id, name, body, schema_version) VALUES (?, ?, ?, ?)").run(
        sessionId,
        artifact.name,
        body,
        SESSION_SCHEMA_VERSION,
      );
    });
  }

  /** The session's artifacts in the order they were saved. */
  async listArtifacts(sessionId: string): Promise<SessionArtifact[]> {
    return this.loadBodies<SessionArtifact>("artifacts", sessionId);
  }

  /** Store a checkpoint; an existing id is replaced in place, so a retried write is harmless. */
  async createCheckpoint(
    sessionId: string,
    checkpoint: Omit<SessionCheckpoint, "schemaVersion" | "createdAt">,
  ): Promise<SessionCheckpoint> {
    await this.ready();
    const stored = stampCheckpoint(checkpoint);
    const body = JSON.stringify(stored);
    this.write("createCheckpoint", () => this.insertCheckpoint(sessionId, stored, body));
    return { ...stored };
  }

  /** The checkpoint, or null when the session has none of that id. */
  async loadCheckpoint(sessionId: string, checkpointId: string): Promise<SessionCheckpoint | null> {
    await this.ready();
    return this.run("loadCheckpoint", () => {
      const row = this.stmt(
        "SELECT body, schema_version FROM checkpoints WHERE session_id = ? AND checkpoint_id = ?",
      ).get(sessionId, checkpointId);
      if (row === undefined) return null;
      return this.parse<SessionCheckpoint>(row.schema_version, row.body, {
        table: "checkpoints",
        key: `${sessionId}/${checkpointId}`,
      });
    });
  }

  /** Checkpoint ids of the session in creation order. */
  async listCheckpoints(sessionId: string): Promise<string[]> {
    await this.ready();
    return this.run("listCheckpoints", () =>
      this.stmt("SELECT checkpoint_id FROM checkpoints WHERE session_id = ? ORDER BY ord")
        .all(sessionId)
        .map((row) => String(row.checkpoint_id)),
    );
  }

  /** Insert or replace a run record. */
  async saveRun(record: RunRecord): Promise<void> {
    await this.ready();
    const now = new Date().toISOString();
    this.write("saveRun", () =>
      this.stmt(
        `INSERT INTO runs (run_id, session_id, status, body, schema_version, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id) DO UPDATE
         SET session_id = excluded.session_id, status = excluded.status, body = excluded.body,
             schema_version = excluded.schema_version, updated_at = excluded.updated_at`,
      ).run(
        record.runId,
        record.sessionId,
        record.status,
        JSON.stringify(record),
        SESSION_SCHEMA_VERSION,
        now,
        now,
      ),
    );
  }

  /** The run record, or null. */
  async getRun(runId: string): Promise<RunRecord | null> {
    await this.ready();
    return this.run("getRun", () => {
      const row = this.stmt("SELECT body, schema_version FROM runs WHERE run_id = ?").get(runId);
      return row === undefined
        ? null
        : this.parse<RunRecord>(row.schema_version, row.body, { table: "runs", key: runId });
    });
  }

  /** Run records matching the filter, in the order runs were first saved. */
  async listRuns(filter: { sessionId?: string; status?: RunStatus } = {}): Promise<RunRecord[]> {
    await this.ready();
    return this.run("listRuns", () =>
      this.stmt(
        `SELECT run_id, body, schema_version FROM runs
         WHERE (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR status = ?2) ORDER BY ord`,
      )
        .all(filter.sessionId ?? null, filter.status ?? null)
        .map((row) =>
          this.parse<RunRecord>(row.schema_version, row.body, { table: "runs", key: String(row.run_id) }),
        ),
    );
  }

  /** Append events in one transaction; a sequence already stored is skipped, so a retried batch is harmless. */
  async appendEvents(runId: string, events: readonly RuntimeEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.ready();
    this.write("appendEvents", () => insertRunEvents(this.prepare, { runId, events }));
  }

  /** The run's events with a sequence above `afterSequence` (default: all), in order. */
  async loadEvents(runId: string, options: { afterSequence?: number } = {}): Promise<RuntimeEvent[]> {
    await this.ready();
    return this.run("loadEvents", () =>
      loadRunRows(this.prepare, {
        table: "run_events",
        runId,
        from: Math.floor(options.afterSequence ?? -1) + 1,
        below: null,
      }).map((row) => {
        const body = this.parse<StoredEvent>(row.schemaVersion, row.body, {
          table: "run_events",
          key: `${runId}#${row.position}`,
        });
        return eventOfStored(body, row.position);
      }),
    );
  }

  /** Write the run's transcript from `fromIndex` on in one transaction (see `writeRunMessages`). */
  async saveRunMessages(runId: string, fromIndex: number, messages: readonly Message[]): Promise<void> {
    await this.ready();
    // Serialised before the transaction, so the file's write lock is held for the statements only.
    const bodies = messages.map((message) => JSON.stringify(message));
    this.write("saveRunMessages", () => writeRunMessages(this.prepare, { runId, fromIndex, bodies }));
  }

  /**
   * Events, messages and the checkpoint in one transaction. On libsql that is usually one statement (migration
   * 5's view), which appends the messages only at the run's stored length; otherwise, or when that statement
   * finds another length, one `BEGIN IMMEDIATE … COMMIT` whose gap check refuses a bad index and rolls
   * everything back.
   */
  async commitCheckpoint(commit: CheckpointCommit): Promise<SessionCheckpoint> {
    await this.ready();
    const { sessionId, runId, events, messages } = commit;
    const stored = stampCheckpoint(commit.checkpoint);
    const body = JSON.stringify(stored); // serialised before the transaction, as in the single writes
    const bodies = messages === null ? null : messages.items.map((message) => JSON.stringify(message));
    const fromIndex = messages?.fromIndex ?? 0;
    const known = this.runKeys.get(runId);
    const rows = { key: known, sessionId, checkpoint: stored, body, fromIndex, bodies, events };
    // libsql only: its calls cost more than the triggers' work; node:sqlite's three statements cost less.
    const alone = this.db?.binding === "libsql" ? checkpointCommitStatement(rows) : null;
    if (alone !== null && this.commitAlone(alone)) return { ...stored };
    const key = this.write("commitCheckpoint", () => {
      let key = known;
      if (bodies !== null) key = writeRunMessages(this.prepare, { runId, fromIndex, bodies, key });
      key = insertRunEvents(this.prepare, { runId, events, key });
      this.insertCheckpoint(sessionId, stored, body);
      return key;
    });
    this.runKeys.remember(runId, key);
    return { ...stored };
  }

  /** Run a checkpoint commit as one statement; false when the run's transcript was not at its append index. */
  private commitAlone(alone: OneStatement): boolean {
    try {
      this.database().runAlone(this.stmt(alone.sql), alone.params);
      return true;
    } catch (error) {
      if (isTranscriptMoved(error)) return false;
      throw toSqliteStoreError(error, this.dbPath, "commitCheckpoint");
    }
  }

  /** The run's transcript: its first `length` messages when given, else all of them. */
  async loadRunMessages(runId: string, options: { length?: number } = {}): Promise<Message[]> {
    await this.ready();
    return this.run("loadRunMessages", () =>
      loadRunRows(this.prepare, {
        table: "run_messages",
        runId,
        from: 0,
        below: transcriptBound(options.length),
      }).map((row) =>
        this.parse<Message>(row.schemaVersion, row.body, {
          table: "run_messages",
          key: `${runId}#${row.position}`,
        }),
      ),
    );
  }

  /** Close the file; later calls fail with `store.closed`. Lock rows this manager holds are deleted first. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const db = this.db ?? (await this.opening?.catch(() => undefined));
    this.db = undefined;
    this.statements.clear();
    this.runKeys.clear();
    if (db === undefined) return;
    try {
      // A scope still running when its manager closes must not leave other processes waiting on a live pid.
      db.prepare("DELETE FROM session_locks WHERE owner = ?").run(this.owner);
    } catch {
      // Best effort: the file may be the reason we are closing.
    }
    db.close();
  }

  private async openDatabase(): Promise<SqliteDatabase> {
    if (this.dbPath !== ":memory:") mkdirSync(dirname(this.dbPath), { recursive: true });
    const db = await openSqliteDatabase(this.dbPath, { binding: this.binding, importer: this.importer });
    try {
      // The busy timeout first: switching to WAL itself waits for other connections.
      db.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`);
      if (this.wal && this.dbPath !== ":memory:") await enableWal(db, this.busyTimeoutMs);
      db.exec(`PRAGMA synchronous = ${this.synchronous}`);
      migrateSqlite(db, this.dbPath);
    } catch (error) {
      db.close();
      throw error;
    }
    if (this.closed) {
      db.close();
      throw sqliteStoreClosedError();
    }
    this.db = db;
    return db;
  }

  /** `stmt` as a function, for the row helpers that write inside this manager's transactions. */
  private readonly prepare = (sql: string): SqliteStatement => this.stmt(sql);

  /** A cached prepared statement: preparing is most of a small statement's cost. */
  private stmt(sql: string): SqliteStatement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.database().prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private database(): SqliteDatabase {
    if (this.closed || this.db === undefined) throw sqliteStoreClosedError();
    return this.db;
  }

  /** Run synchronous store work, with failures typed. */
  private run<R>(operation: string, work: () => R): R {
    try {
      return work();
    } catch (error) {
      throw toSqliteStoreError(error, this.dbPath, operation);
    }
  }

  /**
   * Run synchronous store work in a `BEGIN IMMEDIATE` transaction, with failures typed. Every write goes this
   * way, even a single statement, except a checkpoint commit's own (`runAlone`, which resets it when it fails): a
   * busy database then fails the `BEGIN`, and a full disk the `COMMIT`, never a prepared statement — libsql does
   * not reset a statement that failed, and one left running keeps every later transaction of the connection
   * from committing.
   */
  private write<R>(operation: string, work: () => R): R {
    return this.run(operation, () => this.database().transaction(work));
  }

  // Not INSERT OR IGNORE: that rewrites sqlite_sequence, a WAL page a checkpoint, even when the row exists.
  private ensureSession(sessionId: string): void {
    const now = new Date().toISOString();
    this.stmt(
      `INSERT INTO sessions (session_id, state, schema_version, created_at, updated_at)
       SELECT ?1, '{}', ?2, ?3, ?3 WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE session_id = ?1)`,
    ).run(sessionId, SESSION_SCHEMA_VERSION, now);
  }

  /**
   * Inside a transaction: upsert a stamped checkpoint; a replaced one keeps its `ord`, so its list position. The
   * session's row, when missing, is made by the table's triggers (migration 4).
   */
  private insertCheckpoint(sessionId: string, stored: SessionCheckpoint, body: string): void {
    this.stmt(
      `INSERT INTO checkpoints (session_id, checkpoint_id, body, schema_version, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (session_id, checkpoint_id) DO UPDATE
       SET body = excluded.body, schema_version = excluded.schema_version, created_at = excluded.created_at`,
    ).run(sessionId, stored.checkpointId, body, SESSION_SCHEMA_VERSION, stored.createdAt);
  }

  private saveScopeState(sessionId: string, state: Record<string, unknown>): void {
    // An update, not an upsert: a session deleted inside its own scope stays deleted.
    this.write("session save", () =>
      this.stmt("UPDATE sessions SET state = ?, schema_version = ?, updated_at = ? WHERE session_id = ?").run(
        JSON.stringify(state),
        SESSION_SCHEMA_VERSION,
        new Date().toISOString(),
        sessionId,
      ),
    );
  }

  private async loadBodies<T>(table: "messages" | "artifacts", sessionId: string): Promise<T[]> {
    await this.ready();
    return this.run(`load ${table}`, () =>
      this.stmt(`SELECT seq, body, schema_version FROM ${table} WHERE session_id = ? ORDER BY seq`)
        .all(sessionId)
        .map((row) =>
          this.parse<T>(row.schema_version, row.body, { table, key: `${sessionId}#${String(row.seq)}` }),
        ),
    );
  }

  /** Check and parse a stored row's JSON, naming its table and key (the store adds its file) when refused. */
  private parse<T>(version: unknown, body: unknown, where: Omit<SqliteRowLocation, "dbPath">): T {
    return checkSqliteRow<T>(version, body, { dbPath: this.dbPath, ...where });
  }
}
