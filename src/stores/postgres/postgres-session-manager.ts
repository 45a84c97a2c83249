// Long because it is the whole session-store seam over SQL: one method per SessionManager call, each one statement.
import { createHash } from "node:crypto";
import type { Pool, QueryResultRow } from "pg";
import type { Message } from "../../contracts/message.js";
import type { RunRecord, RunStatus } from "../../contracts/run-types.js";
import type { RuntimeEvent } from "../../contracts/runtime-event.js";
import { KeelError } from "../../errors/keel-error.js";
import { enterSessionScope } from "../../sessions/enter-session-scope.js";
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
import {
  checkTranscriptIndex,
  eventOfStored,
  type StoredEvent,
  stampCheckpoint,
} from "../../sessions/session-records.js";
import { transcriptBound } from "../../sessions/transcript-bound.js";
import { checkSchemaVersion } from "./check-schema-version.js";
import { holdSessionScope, type SessionScopeStore } from "./hold-session-scope.js";
import { importPg } from "./import-pg.js";
import { migrate, quoteSchema } from "./migrations.js";
import { resolveConnectionString } from "./resolve-connection-string.js";
import { redactConnectionString, toStoreError, withConflictRetry } from "./to-store-error.js";

/** Options of {@link PostgresSessionManager}. */
export interface PostgresSessionManagerOptions {
  /** Default: `$PGURL`, then `$DATABASE_URL`, then `postgres://127.0.0.1:5432/test`. Ignored with `pool`. */
  connectionString?: string;
  /**
   * Use this pool instead of opening one; `close()` leaves it open, since its owner may still need it. Held
   * sessions then take their connections from it too, so size it above the number of sessions held at once.
   */
  pool?: Pool;
  /** Schema holding the tables; created and migrated on first use. Default `keel`. */
  schema?: string;
  /** Connections for queries, and as many again for held sessions. Default 10. */
  poolSize?: number;
  /** How long `session()` waits for another process to let go of the session. Default 30000. */
  lockTimeoutMs?: number;
  /** Runs allowed to wait per session in this process. Default 1000. */
  queueSize?: number;
}

/**
 * Session store on PostgreSQL (type `postgres`): any process pointed at the same schema can resume any run.
 * `session()` is exclusive across processes through an advisory lock held on a dedicated connection for the
 * scope; in this process a {@link SessionLock} queues waiters FIFO in front of it, so the queue bound holds and
 * only one connection per session waits on the server.
 */
export class PostgresSessionManager implements SessionManager, CheckpointCommitter {
  private readonly lock = new SessionLock();
  private readonly scopeStore: Omit<SessionScopeStore, "lockPool">;
  private readonly schema: string;
  private readonly q: string;
  private readonly where: string;
  private readonly commitStatement: NamedStatement;
  private readonly connectionString: string;
  private readonly poolSize: number;
  private readonly lockTimeoutMs: number;
  private readonly queueSize: number;
  private readonly ownsPools: boolean;
  private pool: Pool | undefined;
  /** Scopes hold their connection for a whole run; a separate pool keeps them from starving plain queries. */
  private lockPool: Pool | undefined;
  private opening: Promise<void> | undefined;
  private closed = false;

  constructor(options: PostgresSessionManagerOptions = {}) {
    this.schema = options.schema ?? "keel";
    this.q = quoteSchema(this.schema);
    this.commitStatement = namedStatement(
      `select ${this.q}.commit_checkpoint($1, $2, $3::int[], $4::json, $5, $6::json, $7, $8::json, $9, $10) as stored`,
    );
    this.connectionString = resolveConnectionString(options.connectionString);
    this.poolSize = options.poolSize ?? 10;
    this.lockTimeoutMs = Math.max(0, Math.floor(options.lockTimeoutMs ?? 30_000));
    this.queueSize = options.queueSize ?? DEFAULT_SESSION_QUEUE_SIZE;
    this.pool = options.pool;
    this.lockPool = options.pool;
    this.ownsPools = options.pool === undefined;
    this.where =
      options.pool === undefined ? redactConnectionString(this.connectionString) : "the pool's server";
    this.scopeStore = {
      schema: this.schema,
      quoted: this.q,
      where: this.where,
      lockTimeoutMs: this.lockTimeoutMs,
      held: new Map(),
    };
  }

  /** Build a manager and connect and migrate now, so a missing `pg` or an unreachable server fails here. */
  static async open(options: PostgresSessionManagerOptions = {}): Promise<PostgresSessionManager> {
    const manager = new PostgresSessionManager(options);
    try {
      await manager.ready();
    } catch (error) {
      await manager.close();
      throw error;
    }
    return manager;
  }

  /** Import `pg`, open the pools and migrate the schema; later calls share the first one's outcome. */
  ready(): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError());
    this.opening ??= this.openPools().catch((error: unknown) => {
      // Let a later call try again: the server may be back.
      this.opening = undefined;
      throw toStoreError(error, this.where, "migrate");
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
      held: this.scopeStore.held,
      sessionId,
      fn,
      options,
      defaultQueueSize: this.queueSize,
      hold: async (token) => {
        await this.ready();
        const store = { ...this.scopeStore, lockPool: this.lockPool as Pool };
        return holdSessionScope(
          store,
          { sessionId, token, signal: options.signal, outage: options.outage },
          fn,
        );
      },
    });
  }

  /** A copy of the session's state; `{}` for an unknown session. */
  async getState(sessionId: string): Promise<Record<string, unknown>> {
    const rows = await this.query<{ state: Record<string, unknown>; schema_version: number }>(
      "getState",
      `select state, schema_version from ${this.q}.sessions where session_id = $1`,
      [sessionId],
    );
    const row = rows[0];
    if (row === undefined) return {};
    this.checkVersion(row.schema_version, "sessions", sessionId);
    return row.state;
  }

  /** Replace the session's state. */
  async setState(sessionId: string, state: Record<string, unknown>): Promise<void> {
    await this.query(
      "setState",
      `insert into ${this.q}.sessions (session_id, state, schema_version) values ($1, $2, $3)
       on conflict (session_id) do update
       set state = excluded.state, schema_version = excluded.schema_version, updated_at = now()`,
      [sessionId, JSON.stringify(state), SESSION_SCHEMA_VERSION],
    );
  }

  /** Forget the session's state, messages, artifacts and checkpoints in one statement; its runs stay. */
  async deleteSession(sessionId: string): Promise<void> {
    await this.query(
      "deleteSession",
      `with m as (delete from ${this.q}.messages where session_id = $1),
            a as (delete from ${this.q}.artifacts where session_id = $1),
            c as (delete from ${this.q}.checkpoints where session_id = $1)
       delete from ${this.q}.sessions where session_id = $1`,
      [sessionId],
    );
  }

  /** Sessions with any stored data, oldest first. */
  async listSessions(): Promise<string[]> {
    const rows = await this.query<{ session_id: string }>(
      "listSessions",
      `select session_id from ${this.q}.sessions order by created_at, session_id`,
    );
    return rows.map((row) => row.session_id);
  }

  /** Append a message to the session's transcript. */
  async appendMessage(sessionId: string, message: Message): Promise<void> {
    await this.appendMessages(sessionId, [message]);
  }

  /** Append messages in order with one statement, so a batch lands whole or not at all. */
  async appendMessages(sessionId: string, messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return;
    // `order by ordinality` makes the bigserial follow the batch's order.
    await this.query(
      "appendMessages",
      `with s as (${this.ensureSession()})
       insert into ${this.q}.messages (session_id, body, schema_version)
       select $1, value, $2 from json_array_elements($3::json) with ordinality order by ordinality`,
      [sessionId, SESSION_SCHEMA_VERSION, JSON.stringify(messages)],
    );
  }

  /** The session's transcript in order. */
  async loadMessages(sessionId: string): Promise<Message[]> {
    return this.loadBodies<Message>("messages", sessionId);
  }

  /** Add an artifact to the session. */
  async saveArtifact(sessionId: string, artifact: SessionArtifact): Promise<void> {
    await this.query(
      "saveArtifact",
      `with s as (${this.ensureSession()})
       insert into ${this.q}.artifacts (session_id, name, body, schema_version) values ($1, $3, $4, $2)`,
      [
        sessionId,
        SESSION_SCHEMA_VERSION,
        artifact.name,
        JSON.stringify({ ...artifact, kind: artifact.kind ?? "generic" }),
      ],
    );
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
    const stored = stampCheckpoint(checkpoint);
    await this.query(
      "createCheckpoint",
      `with s as (${this.ensureSession()})
       insert into ${this.q}.checkpoints (session_id, checkpoint_id, body, schema_version, created_at)
       values ($1, $3, $4, $2, $5)
       on conflict (session_id, checkpoint_id) do update
       set body = excluded.body, schema_version = excluded.schema_version, created_at = excluded.created_at`,
      [sessionId, SESSION_SCHEMA_VERSION, stored.checkpointId, JSON.stringify(stored), stored.createdAt],
    );
    return { ...stored };
  }

  /** The checkpoint, or null when the session has none of that id. */
  async loadCheckpoint(sessionId: string, checkpointId: string): Promise<SessionCheckpoint | null> {
    const rows = await this.query<{ body: SessionCheckpoint; schema_version: number }>(
      "loadCheckpoint",
      `select body, schema_version from ${this.q}.checkpoints where session_id = $1 and checkpoint_id = $2`,
      [sessionId, checkpointId],
    );
    const row = rows[0];
    if (row === undefined) return null;
    this.checkVersion(row.schema_version, "checkpoints", `${sessionId}/${checkpointId}`);
    return row.body;
  }

  /** Checkpoint ids of the session in creation order. */
  async listCheckpoints(sessionId: string): Promise<string[]> {
    const rows = await this.query<{ checkpoint_id: string }>(
      "listCheckpoints",
      `select checkpoint_id from ${this.q}.checkpoints where session_id = $1 order by ord`,
      [sessionId],
    );
    return rows.map((row) => row.checkpoint_id);
  }

  /** Insert or replace a run record. */
  async saveRun(record: RunRecord): Promise<void> {
    await this.query(
      "saveRun",
      `insert into ${this.q}.runs (run_id, session_id, status, body, schema_version) values ($1, $2, $3, $4, $5)
       on conflict (run_id) do update
       set session_id = excluded.session_id, status = excluded.status, body = excluded.body,
           schema_version = excluded.schema_version, updated_at = now()`,
      [record.runId, record.sessionId, record.status, JSON.stringify(record), SESSION_SCHEMA_VERSION],
    );
  }

  /** The run record, or null. */
  async getRun(runId: string): Promise<RunRecord | null> {
    const rows = await this.query<{ body: RunRecord; schema_version: number }>(
      "getRun",
      `select body, schema_version from ${this.q}.runs where run_id = $1`,
      [runId],
    );
    const row = rows[0];
    if (row === undefined) return null;
    this.checkVersion(row.schema_version, "runs", runId);
    return row.body;
  }

  /** Run records matching the filter, in the order runs were first saved. */
  async listRuns(filter: { sessionId?: string; status?: RunStatus } = {}): Promise<RunRecord[]> {
    const rows = await this.query<{ run_id: string; body: RunRecord; schema_version: number }>(
      "listRuns",
      `select run_id, body, schema_version from ${this.q}.runs
       where ($1::text is null or session_id = $1) and ($2::text is null or status = $2) order by ord`,
      [filter.sessionId ?? null, filter.status ?? null],
    );
    return rows.map((row) => {
      this.checkVersion(row.schema_version, "runs", row.run_id);
      return row.body;
    });
  }

  /** Append events; a sequence already stored is skipped, so a retried batch is not duplicated. */
  async appendEvents(runId: string, events: readonly RuntimeEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.query(
      "appendEvents",
      `insert into ${this.q}.run_events (run_id, sequence, body, schema_version)
       select $1, e.sequence, e.body, $2
       from rows from (unnest($3::int[]), json_array_elements($4::json)) as e (sequence, body)
       on conflict (run_id, sequence) do nothing`,
      [runId, SESSION_SCHEMA_VERSION, sequencesOf(events), eventsJson(events)],
    );
  }

  /** The run's events with a sequence above `afterSequence` (default: all), in order. */
  async loadEvents(runId: string, options: { afterSequence?: number } = {}): Promise<RuntimeEvent[]> {
    const rows = await this.query<{ sequence: number; body: StoredEvent; schema_version: number }>(
      "loadEvents",
      `select sequence, body, schema_version from ${this.q}.run_events
       where run_id = $1 and ($2::int is null or sequence > $2) order by sequence`,
      [runId, options.afterSequence ?? null],
    );
    return rows.map(({ sequence, body, schema_version }) => {
      this.checkVersion(schema_version, "run_events", `${runId}#${sequence}`);
      return eventOfStored(body, sequence);
    });
  }

  /**
   * Write the run's transcript from `fromIndex` on in one round trip: `save_run_messages` (migration 2) takes
   * the run's lock, reads the stored length, and — unless `fromIndex` would leave a gap — deletes the tail and
   * inserts the messages, all in the statement's transaction. It answers the length it found, which is how a
   * refused index is reported without a second query.
   */
  async saveRunMessages(runId: string, fromIndex: number, messages: readonly Message[]): Promise<void> {
    const rows = await this.query<{ stored: string }>(
      "saveRunMessages",
      `select ${this.q}.save_run_messages($1, $2, $3::json, $4) as stored`,
      [runId, functionIndex(fromIndex), JSON.stringify(messages), SESSION_SCHEMA_VERSION],
    );
    checkTranscriptIndex(runId, fromIndex, Number(rows[0]?.stored ?? 0));
  }

  /**
   * Events, messages and the checkpoint in one round trip: `commit_checkpoint` (migration 4) writes the three in
   * the statement's transaction, the messages first through `save_run_messages`, so a refused index stores
   * nothing at all. It answers the transcript length it found (null without messages), as `saveRunMessages`.
   * The statement is a named one, parsed and planned once per connection: a durable run sends it at every step.
   */
  async commitCheckpoint(commit: CheckpointCommit): Promise<SessionCheckpoint> {
    const { runId, messages } = commit;
    const stored = stampCheckpoint(commit.checkpoint);
    const rows = await this.query<{ stored: string | null }>("commitCheckpoint", this.commitStatement, [
      commit.sessionId,
      runId,
      sequencesOf(commit.events),
      eventsJson(commit.events),
      messages === null ? null : functionIndex(messages.fromIndex),
      messages === null ? null : JSON.stringify(messages.items),
      stored.checkpointId,
      JSON.stringify(stored),
      stored.createdAt,
      SESSION_SCHEMA_VERSION,
    ]);
    if (messages !== null) checkTranscriptIndex(runId, messages.fromIndex, Number(rows[0]?.stored ?? 0));
    return { ...stored };
  }

  /** The run's transcript: its first `length` messages when given, else all of them. */
  async loadRunMessages(runId: string, options: { length?: number } = {}): Promise<Message[]> {
    const rows = await this.query<{ idx: number; body: Message; schema_version: number }>(
      "loadRunMessages",
      `select idx, body, schema_version from ${this.q}.run_messages
       where run_id = $1 and ($2::int is null or idx < $2) order by idx`,
      [runId, transcriptBound(options.length)],
    );
    return rows.map((row) => {
      this.checkVersion(row.schema_version, "run_messages", `${runId}#${row.idx}`);
      return row.body;
    });
  }

  /** End the pools this manager opened; a pool passed in is left to its owner. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.opening?.catch(() => {});
    if (!this.ownsPools) return;
    const pools = [this.pool, this.lockPool].filter((pool): pool is Pool => pool !== undefined);
    this.pool = undefined;
    this.lockPool = undefined;
    await Promise.all(pools.map((pool) => pool.end().catch(() => {})));
  }

  private async openPools(): Promise<void> {
    if (this.pool === undefined) {
      const pg = await importPg();
      const make = () => {
        const pool = new pg.Pool({ connectionString: this.connectionString, max: this.poolSize });
        // An idle client whose server went away emits `error`; unheard, it would crash the process.
        pool.on("error", () => {});
        return pool;
      };
      this.pool = make();
      this.lockPool = make();
    }
    await migrate(this.pool, this.schema);
  }

  private ensureSession(): string {
    return `insert into ${this.q}.sessions (session_id, state, schema_version) values ($1, '{}', $2)
            on conflict (session_id) do nothing`;
  }

  private async loadBodies<T>(table: "messages" | "artifacts", sessionId: string): Promise<T[]> {
    const rows = await this.query<{ seq: string; body: T; schema_version: number }>(
      `load ${table}`,
      `select seq, body, schema_version from ${this.q}.${table} where session_id = $1 order by seq`,
      [sessionId],
    );
    return rows.map((row) => {
      this.checkVersion(row.schema_version, table, `${sessionId}#${row.seq}`);
      return row.body;
    });
  }

  /**
   * One statement on the query pool, retried on serialization failures and deadlocks, errors typed. A
   * {@link NamedStatement} is prepared on each connection the first time it runs there.
   */
  private async query<R extends QueryResultRow>(
    operation: string,
    statement: string | NamedStatement,
    values: unknown[] = [],
  ): Promise<R[]> {
    await this.ready();
    const pool = this.pool as Pool;
    const config = typeof statement === "string" ? { text: statement, values } : { ...statement, values };
    return (await withConflictRetry(() => pool.query<R>(config), this.where, operation)).rows;
  }

  private checkVersion(version: number, table: string, key: string): void {
    checkSchemaVersion(version, { schema: this.schema, table, key });
  }

  private closedError(): KeelError {
    return new KeelError("postgres store: the session manager is closed", {
      code: "store.closed",
      hint: "Create a new PostgresSessionManager; close() ended its connections.",
    });
  }
}

/** A statement the server keeps prepared per connection, under a name that only this text can have. */
interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

/**
 * Name the statement after a hash of its text: two managers on one pool (other schemas, so other texts) never
 * claim one name for two statements, which `pg` would refuse, and the name stays within Postgres' 63 bytes.
 */
function namedStatement(text: string): NamedStatement {
  return { name: `keel_${createHash("sha256").update(text).digest("hex").slice(0, 32)}`, text };
}

/**
 * The events' sequences, the key each event is stored under, as the `int[]` literal beside their `json` array.
 * Written here rather than by `pg`, which quotes every element of a JavaScript array through two regular
 * expressions; a sequence is an integer, so it needs no quoting.
 */
function sequencesOf(events: readonly RuntimeEvent[]): string {
  return `{${events.map((event) => event.sequence).join(",")}}`;
}

/** Events as the `json` array the store's statements take: every field, the sequence included. */
function eventsJson(events: readonly RuntimeEvent[]): string {
  return JSON.stringify(
    events.map((event) => ({
      kind: event.kind,
      runId: event.runId,
      sessionId: event.sessionId,
      agentId: event.agentId,
      sequence: event.sequence,
      timestampMs: event.timestampMs,
      payload: event.payload,
    })),
  );
}

/** A transcript index for the functions' bigint: one it cannot take is refused the same way, as -1 writes nothing. */
function functionIndex(fromIndex: number): number {
  return Number.isSafeInteger(fromIndex) ? fromIndex : -1;
}
