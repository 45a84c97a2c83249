import type { Pool } from "pg";
import { ERROR_CODES } from "../../errors/error-codes.js";
import { KeelError } from "../../errors/keel-error.js";
import { importPg } from "../../stores/postgres/import-pg.js";
import { quoteSchema } from "../../stores/postgres/migrations.js";
import { withPgTransaction } from "../../stores/postgres/with-pg-transaction.js";
import { nowSeconds } from "../wire/now-seconds.js";
import type { JsonValue } from "../wire/run-result.js";
import type { ArtifactRecord, AuditEntry, EventRecord, HostStores, TranscriptRecord } from "./host-stores.js";

/**
 * The version of the tables below; a schema holding another version is refused rather than misread. Version 2
 * adds a `thread_id` column to the transcript and the event log, so a run can read one thread of a conversation
 * by index; a version-1 schema is migrated in place, its rows kept and their threads read from their records.
 */
const HOST_SCHEMA_VERSION = 2;

const TABLES = `
CREATE TABLE IF NOT EXISTS host_schema (version integer NOT NULL);
CREATE TABLE IF NOT EXISTS host_events (seq bigserial PRIMARY KEY, event_id text NOT NULL, conversation_id text,
  event_type text NOT NULL, record jsonb NOT NULL, created_at bigint NOT NULL);
CREATE INDEX IF NOT EXISTS host_events_event_id ON host_events (event_id);
CREATE INDEX IF NOT EXISTS host_events_conversation ON host_events (conversation_id, seq);
CREATE TABLE IF NOT EXISTS host_transcript (seq bigserial PRIMARY KEY, conversation_id text NOT NULL,
  record jsonb NOT NULL, created_at bigint NOT NULL);
CREATE INDEX IF NOT EXISTS host_transcript_conversation ON host_transcript (conversation_id, seq);
CREATE TABLE IF NOT EXISTS host_artifacts (artifact_id text PRIMARY KEY, record jsonb NOT NULL, content bytea);
CREATE TABLE IF NOT EXISTS host_state (scope_key text NOT NULL, key text NOT NULL, value jsonb NOT NULL,
  PRIMARY KEY (scope_key, key));
CREATE TABLE IF NOT EXISTS host_blobs (owner text NOT NULL, key text NOT NULL, value bytea NOT NULL,
  PRIMARY KEY (owner, key));
CREATE TABLE IF NOT EXISTS host_audit (id bigserial PRIMARY KEY, entry jsonb NOT NULL);
`;

/** From version 1 to 2 (and a fresh schema's last step): the thread columns, filled from the records. */
const THREAD_COLUMNS = `
ALTER TABLE host_events ADD COLUMN IF NOT EXISTS thread_id text;
ALTER TABLE host_transcript ADD COLUMN IF NOT EXISTS thread_id text;
UPDATE host_events SET thread_id = record->>'thread_id' WHERE thread_id IS NULL AND record->>'thread_id' IS NOT NULL;
UPDATE host_transcript SET thread_id = record->>'thread_id'
  WHERE thread_id IS NULL AND record->>'thread_id' IS NOT NULL;
CREATE INDEX IF NOT EXISTS host_events_thread ON host_events (conversation_id, thread_id, seq);
CREATE INDEX IF NOT EXISTS host_transcript_thread ON host_transcript (conversation_id, thread_id, seq);
`;

/** One thread when the parameter is a thread id; the whole conversation when it is null. */
const IN_THREAD = (parameter: string) => `(${parameter}::text IS NULL OR thread_id = ${parameter})`;

/**
 * The host stores in PostgreSQL, one table each in `schema` (created when missing): what a host keeps survives
 * its process. Pass a `pool`, or a `connectionString` (the stores then own their pool and `close()` ends it).
 */
export async function createPostgresHostStores(options: {
  pool?: Pool;
  connectionString?: string;
  schema?: string;
}): Promise<HostStores & { close(): Promise<void> }> {
  const schema = quoteSchema(options.schema ?? "keel_host");
  const ownPool = options.pool === undefined;
  const pool = options.pool ?? new (await importPg()).Pool({ connectionString: options.connectionString });
  try {
    await createTables(pool, schema);
  } catch (error) {
    if (ownPool) await pool.end();
    throw error;
  }

  const table = (name: string) => `${schema}.${name}`;
  const query = async <R extends Record<string, unknown>>(text: string, values: unknown[] = []) =>
    (await pool.query<R>(text, values)).rows;
  const withSeq = <T extends { seq: number; cursor: string }>(row: {
    seq: string;
    record: Omit<T, "seq" | "cursor">;
  }): T => ({ ...row.record, seq: Number(row.seq), cursor: String(row.seq) }) as T;

  return {
    events: {
      append: async (record) => {
        const created_at = nowSeconds();
        const [row] = await query<{ seq: string }>(
          `INSERT INTO ${table("host_events")} (event_id, conversation_id, thread_id, event_type, record, created_at)
           VALUES ($1, $2, $3, $4, $5, $6) RETURNING seq`,
          [
            record.event_id,
            record.conversation_id ?? null,
            record.thread_id ?? null,
            record.event_type,
            { ...record, created_at },
            created_at,
          ],
        );
        return { ...record, created_at, seq: Number(row!.seq), cursor: row!.seq };
      },
      get: async (eventId) => {
        const [row] = await query<{ seq: string; record: EventRecord }>(
          `SELECT seq, record FROM ${table("host_events")} WHERE event_id = $1 ORDER BY seq DESC LIMIT 1`,
          [eventId],
        );
        return row ? withSeq<EventRecord>(row) : null;
      },
      page: async ({ conversationId, threadId, beforeSeq, limit, eventTypes }) => {
        const rows = await query<{ seq: string; record: EventRecord }>(
          `SELECT seq, record FROM ${table("host_events")} WHERE ($1::text IS NULL OR conversation_id = $1)
             AND ($2::bigint IS NULL OR seq < $2) AND ($3::text[] IS NULL OR event_type = ANY($3))
             AND ($5::text IS NULL OR thread_id = $5)
           ORDER BY seq DESC LIMIT $4`,
          [conversationId ?? null, beforeSeq ?? null, eventTypes ?? null, limit + 1, threadId ?? null],
        );
        return {
          items: rows.slice(0, limit).map((row) => withSeq<EventRecord>(row)),
          hasMore: rows.length > limit,
        };
      },
    },
    transcript: {
      append: async (item) => {
        const created_at = nowSeconds();
        const transcript_id = crypto.randomUUID();
        const [row] = await query<{ seq: string }>(
          `INSERT INTO ${table("host_transcript")} (conversation_id, thread_id, record, created_at)
           VALUES ($1, $2, $3, $4) RETURNING seq`,
          [item.conversation_id, item.thread_id ?? null, { ...item, transcript_id, created_at }, created_at],
        );
        return { ...item, transcript_id, created_at, seq: Number(row!.seq), cursor: row!.seq };
      },
      latestSeq: async (conversationId, threadId) => {
        const [row] = await query<{ seq: string | null }>(
          `SELECT max(seq) AS seq FROM ${table("host_transcript")} WHERE conversation_id = $1 AND ${IN_THREAD("$2")}`,
          [conversationId, threadId ?? null],
        );
        return row?.seq == null ? null : Number(row.seq);
      },
      page: async ({ conversationId, threadId, beforeSeq, afterSeq, limit, direction }) => {
        const forward = direction === "forward";
        const rows = await query<{ seq: string; record: TranscriptRecord }>(
          `SELECT seq, record FROM ${table("host_transcript")} WHERE conversation_id = $1 AND ${IN_THREAD("$4")}
             AND ($2::bigint IS NULL OR seq ${forward ? ">" : "<"} $2)
           ORDER BY seq ${forward ? "ASC" : "DESC"} LIMIT $3`,
          [conversationId, (forward ? afterSeq : beforeSeq) ?? null, limit + 1, threadId ?? null],
        );
        return {
          items: rows.slice(0, limit).map((row) => withSeq<TranscriptRecord>(row)),
          hasMore: rows.length > limit,
        };
      },
      search: async ({ conversationId, threadId, text, topK, roles }) => {
        const rows = await query<{ seq: string; record: TranscriptRecord }>(
          `SELECT seq, record FROM ${table("host_transcript")} WHERE conversation_id = $1 AND ${IN_THREAD("$5")}
             AND strpos(lower(record->>'content'), lower($2)) > 0 AND ($3::text[] IS NULL OR record->>'role' = ANY($3))
           ORDER BY seq DESC LIMIT $4`,
          [conversationId, text, roles ?? null, topK, threadId ?? null],
        );
        return rows.map((row) => withSeq<TranscriptRecord>(row));
      },
    },
    artifacts: {
      register: async (record, content) => {
        const stored: ArtifactRecord = { ...record, created_at: nowSeconds() };
        await query(
          `INSERT INTO ${table("host_artifacts")} (artifact_id, record, content) VALUES ($1, $2, $3)
           ON CONFLICT (artifact_id) DO UPDATE SET record = EXCLUDED.record, content = EXCLUDED.content`,
          [record.artifact_id, stored, content ? Buffer.from(content) : null],
        );
        return stored;
      },
      get: async (artifactId) =>
        (
          await query<{ record: ArtifactRecord }>(
            `SELECT record FROM ${table("host_artifacts")} WHERE artifact_id = $1`,
            [artifactId],
          )
        )[0]?.record ?? null,
      read: async (artifactId, { offset, limit }) => {
        const [row] = await query<{ part: Buffer | null }>(
          `SELECT substring(content FROM $2 FOR $3) AS part FROM ${table("host_artifacts")} WHERE artifact_id = $1`,
          [artifactId, offset + 1, limit],
        );
        return row?.part ? new Uint8Array(row.part) : null;
      },
    },
    state: {
      get: async (scopeKey, key) =>
        (
          await query<{ value: JsonValue }>(
            `SELECT value FROM ${table("host_state")} WHERE scope_key = $1 AND key = $2`,
            [scopeKey, key],
          )
        )[0]?.value,
      set: async (scopeKey, key, value) => {
        await query(
          `INSERT INTO ${table("host_state")} (scope_key, key, value) VALUES ($1, $2, $3)
           ON CONFLICT (scope_key, key) DO UPDATE SET value = EXCLUDED.value`,
          [scopeKey, key, JSON.stringify(value)],
        );
      },
      delete: async (scopeKey, key) =>
        (
          await pool.query(`DELETE FROM ${table("host_state")} WHERE scope_key = $1 AND key = $2`, [
            scopeKey,
            key,
          ])
        ).rowCount === 1,
      list: async (scopeKey, { prefix, limit }) => {
        const rows = await query<{ key: string }>(
          `SELECT key FROM ${table("host_state")} WHERE scope_key = $1 AND ($2::text IS NULL OR starts_with(key, $2))
           ORDER BY key COLLATE "C" LIMIT $3`,
          [scopeKey, prefix ?? null, limit + 1],
        );
        return { keys: rows.slice(0, limit).map((row) => row.key), hasMore: rows.length > limit };
      },
      snapshot: async (scopeKey) =>
        Object.fromEntries(
          (
            await query<{ key: string; value: JsonValue }>(
              `SELECT key, value FROM ${table("host_state")} WHERE scope_key = $1`,
              [scopeKey],
            )
          ).map((row) => [row.key, row.value]),
        ),
    },
    storage: {
      get: async (owner, key) => {
        const [row] = await query<{ value: Buffer }>(
          `SELECT value FROM ${table("host_blobs")} WHERE owner = $1 AND key = $2`,
          [owner, key],
        );
        return row ? new Uint8Array(row.value) : null;
      },
      set: async (owner, key, value) => {
        await query(
          `INSERT INTO ${table("host_blobs")} (owner, key, value) VALUES ($1, $2, $3)
           ON CONFLICT (owner, key) DO UPDATE SET value = EXCLUDED.value`,
          [owner, key, Buffer.from(value)],
        );
      },
      delete: async (owner, key) =>
        (await pool.query(`DELETE FROM ${table("host_blobs")} WHERE owner = $1 AND key = $2`, [owner, key]))
          .rowCount === 1,
      keys: async (owner) =>
        (
          await query<{ key: string }>(
            `SELECT key FROM ${table("host_blobs")} WHERE owner = $1 ORDER BY key COLLATE "C"`,
            [owner],
          )
        ).map((row) => row.key),
    },
    audit: {
      record: async (entry: AuditEntry) => {
        await query(`INSERT INTO ${table("host_audit")} (entry) VALUES ($1)`, [entry]);
      },
    },
    close: async () => {
      if (ownPool) await pool.end();
    },
  };
}

async function createTables(pool: Pool, schema: string): Promise<void> {
  await withPgTransaction(pool, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`SET LOCAL search_path TO ${schema}`);
    await client.query(TABLES);
    const { rows } = await client.query<{ version: number }>("SELECT version FROM host_schema");
    const version = rows[0]?.version;
    if (version === undefined || version === 1) await client.query(THREAD_COLUMNS);
    if (version === undefined)
      await client.query("INSERT INTO host_schema (version) VALUES ($1)", [HOST_SCHEMA_VERSION]);
    else if (version === 1) await client.query("UPDATE host_schema SET version = $1", [HOST_SCHEMA_VERSION]);
    else if (version !== HOST_SCHEMA_VERSION) {
      throw new KeelError(
        `host stores: schema ${schema} holds version ${version}, this Keel reads ${HOST_SCHEMA_VERSION}`,
        {
          code: ERROR_CODES.STORE_SCHEMA_VERSION,
          hint: "Use another schema, or the Keel version that wrote this one",
        },
      );
    }
  });
}
