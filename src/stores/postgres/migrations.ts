import type { Pool } from "pg";
import { KeelError } from "../../errors/keel-error.js";
import { withPgTransaction } from "./with-pg-transaction.js";

/** One schema change; `sql` names tables through `{schema}`, which `migrate` replaces with the quoted schema. */
export interface PostgresMigration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

/**
 * The Postgres store's migrations, oldest first. Never edit one that has shipped: databases that already applied
 * it would not see the change. Add a new version instead.
 */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    description: "sessions, messages, artifacts, checkpoints, runs and run events",
    sql: `
      create table if not exists {schema}.sessions (
        session_id text primary key,
        state jsonb not null,
        schema_version int not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      );
      create table if not exists {schema}.messages (
        session_id text not null,
        seq bigserial not null,
        body jsonb not null,
        schema_version int not null,
        primary key (session_id, seq)
      );
      create table if not exists {schema}.artifacts (
        session_id text not null,
        seq bigserial not null,
        name text not null,
        body jsonb not null,
        schema_version int not null,
        primary key (session_id, seq)
      );
      create table if not exists {schema}.checkpoints (
        session_id text not null,
        checkpoint_id text not null,
        -- Kept on upsert, so a replaced checkpoint keeps its place in the list like a Map entry does.
        ord bigserial not null,
        body jsonb not null,
        schema_version int not null,
        created_at timestamptz not null default now(),
        primary key (session_id, checkpoint_id)
      );
      create table if not exists {schema}.runs (
        run_id text primary key,
        session_id text not null,
        status text not null,
        ord bigserial not null,
        body jsonb not null,
        schema_version int not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      );
      create index if not exists runs_session_id_idx on {schema}.runs (session_id);
      create index if not exists runs_status_idx on {schema}.runs (status);
      create table if not exists {schema}.run_events (
        run_id text not null,
        sequence int not null,
        body jsonb not null,
        schema_version int not null,
        primary key (run_id, sequence)
      );
    `,
  },
  {
    version: 2,
    description: "run transcripts, written by one function call per save",
    // A function, so a save is one round trip yet reads the stored length after taking the run's lock: a single
    // statement reads from a snapshot taken before its lock, stale in read committed (the default), while each
    // statement of a volatile function takes a fresh one. The lock is the two-key form, a key space apart from
    // the sessions' `pg_advisory_lock(hashtext(…))`, so a save never waits on a held session; a hash collision
    // only makes two runs' saves take turns.
    sql: `
      create table if not exists {schema}.run_messages (
        run_id text not null,
        idx int not null,
        body jsonb not null,
        schema_version int not null,
        primary key (run_id, idx)
      );
      create or replace function {schema}.save_run_messages(
        p_run_id text, p_from_index bigint, p_messages jsonb, p_schema_version int
      ) returns bigint language plpgsql volatile as $$
      declare
        stored bigint;
      begin
        perform pg_advisory_xact_lock(hashtext('keel.run_messages'), hashtext(p_run_id));
        select coalesce(max(idx) + 1, 0) into stored from {schema}.run_messages where run_id = p_run_id;
        -- A gap (or a negative index) writes nothing; the caller sees the length and refuses the save.
        if p_from_index < 0 or p_from_index > stored then
          return stored;
        end if;
        if p_from_index < stored then
          delete from {schema}.run_messages where run_id = p_run_id and idx >= p_from_index;
        end if;
        insert into {schema}.run_messages (run_id, idx, body, schema_version)
        select p_run_id, p_from_index + ordinality - 1, value, p_schema_version
        from jsonb_array_elements(p_messages) with ordinality;
        return stored;
      end
      $$;
    `,
  },
  {
    version: 3,
    description: "a checkpoint with its events and run messages, written by one function call",
    // One round trip and one transaction for a durable step's three writes (the CheckpointCommitter ability).
    // The messages go first through `save_run_messages` — its run lock, gap check and rewrite — so a refused
    // index returns before the events or the checkpoint are written: all of it is stored or none. A null
    // `p_messages` leaves the transcript alone, and the function then answers null.
    sql: `
      create or replace function {schema}.commit_checkpoint(
        p_session_id text, p_run_id text, p_events jsonb, p_from_index bigint, p_messages jsonb,
        p_checkpoint_id text, p_checkpoint jsonb, p_created_at timestamptz, p_schema_version int
      ) returns bigint language plpgsql volatile as $$
      declare
        stored bigint;
      begin
        if p_messages is not null then
          stored := {schema}.save_run_messages(p_run_id, p_from_index, p_messages, p_schema_version);
          if p_from_index < 0 or p_from_index > stored then
            return stored;
          end if;
        end if;
        insert into {schema}.run_events (run_id, sequence, body, schema_version)
        select p_run_id, (value->>'sequence')::int, value, p_schema_version from jsonb_array_elements(p_events)
        on conflict (run_id, sequence) do nothing;
        insert into {schema}.sessions (session_id, state, schema_version) values (p_session_id, '{}', p_schema_version)
        on conflict (session_id) do nothing;
        -- An upsert that leaves ord alone: a replaced checkpoint keeps its place in the list.
        insert into {schema}.checkpoints (session_id, checkpoint_id, body, schema_version, created_at)
        values (p_session_id, p_checkpoint_id, p_checkpoint, p_schema_version, p_created_at)
        on conflict (session_id, checkpoint_id) do update
        set body = excluded.body, schema_version = excluded.schema_version, created_at = excluded.created_at;
        return stored;
      end
      $$;
    `,
  },
  {
    version: 4,
    description: "documents stored as json, and a cheaper checkpoint commit",
    // The store never looks inside a body or a state on the server: it writes them and reads them back whole.
    // As jsonb every write was parsed into the binary form, its keys sorted, and turned back into text on every
    // read; json keeps the text as sent (checked, not rebuilt), writes less WAL, and also stores the "\u0000"
    // that JSON.stringify writes for a NUL character, which jsonb refuses. Each table is rewritten once, here.
    //
    // The new commit_checkpoint takes the events' sequences as an array beside the events, so the server does
    // not parse each event again to find its key. Events and checkpoint go in as plain inserts first: a retry
    // (a sequence or a checkpoint id already stored) fails that block on the primary key, which undoes the
    // block alone, and the same rows then go in with the upserts of migration 3, skipping stored sequences and
    // replacing the checkpoint in place. So the usual commit does one index descent a row instead of the
    // upsert's two, and no confirmation record a row.
    //
    // Migration 2's and 3's functions stay: their jsonb arguments are stored through the jsonb-to-json
    // assignment cast, so a process still at level 3 keeps committing while it waits to be upgraded.
    sql: `
      alter table {schema}.sessions alter column state type json using state::json;
      alter table {schema}.messages alter column body type json using body::json;
      alter table {schema}.artifacts alter column body type json using body::json;
      alter table {schema}.checkpoints alter column body type json using body::json;
      alter table {schema}.runs alter column body type json using body::json;
      alter table {schema}.run_events alter column body type json using body::json;
      alter table {schema}.run_messages alter column body type json using body::json;
      create or replace function {schema}.save_run_messages(
        p_run_id text, p_from_index bigint, p_messages json, p_schema_version int
      ) returns bigint language plpgsql volatile as $$
      declare
        stored bigint;
      begin
        perform pg_advisory_xact_lock(hashtext('keel.run_messages'), hashtext(p_run_id));
        select coalesce(max(idx) + 1, 0) into stored from {schema}.run_messages where run_id = p_run_id;
        if p_from_index < 0 or p_from_index > stored then
          return stored;
        end if;
        if p_from_index < stored then
          delete from {schema}.run_messages where run_id = p_run_id and idx >= p_from_index;
        end if;
        insert into {schema}.run_messages (run_id, idx, body, schema_version)
        select p_run_id, p_from_index + ordinality - 1, value, p_schema_version
        from json_array_elements(p_messages) with ordinality;
        return stored;
      end
      $$;
      create or replace function {schema}.commit_checkpoint(
        p_session_id text, p_run_id text, p_sequences int[], p_events json, p_from_index bigint,
        p_messages json, p_checkpoint_id text, p_checkpoint json, p_created_at timestamptz, p_schema_version int
      ) returns bigint language plpgsql volatile as $$
      declare
        stored bigint;
      begin
        if p_messages is not null then
          stored := {schema}.save_run_messages(p_run_id, p_from_index, p_messages, p_schema_version);
          if p_from_index < 0 or p_from_index > stored then
            return stored;
          end if;
        end if;
        insert into {schema}.sessions (session_id, state, schema_version) values (p_session_id, '{}', p_schema_version)
        on conflict (session_id) do nothing;
        begin
          insert into {schema}.run_events (run_id, sequence, body, schema_version)
          select p_run_id, e.sequence, e.body, p_schema_version
          from rows from (unnest(p_sequences), json_array_elements(p_events)) as e (sequence, body);
          insert into {schema}.checkpoints (session_id, checkpoint_id, body, schema_version, created_at)
          values (p_session_id, p_checkpoint_id, p_checkpoint, p_schema_version, p_created_at);
        exception when unique_violation then
          insert into {schema}.run_events (run_id, sequence, body, schema_version)
          select p_run_id, e.sequence, e.body, p_schema_version
          from rows from (unnest(p_sequences), json_array_elements(p_events)) as e (sequence, body)
          on conflict (run_id, sequence) do nothing;
          -- An upsert that leaves ord alone: a replaced checkpoint keeps its place in the list.
          insert into {schema}.checkpoints (session_id, checkpoint_id, body, schema_version, created_at)
          values (p_session_id, p_checkpoint_id, p_checkpoint, p_schema_version, p_created_at)
          on conflict (session_id, checkpoint_id) do update
          set body = excluded.body, schema_version = excluded.schema_version, created_at = excluded.created_at;
        end;
        return stored;
      end
      $$;
    `,
  },
];

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The schema as a quoted SQL identifier; refuses names that would need escaping, so none can inject SQL. */
export function quoteSchema(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new KeelError(`postgres store: invalid schema name "${schema}"`, {
      code: "store.config",
      hint: "Use lower-case letters, digits and underscores, starting with a letter or underscore (at most 63).",
    });
  }
  return `"${schema}"`;
}

/**
 * Create `schema` with its `schema_migrations` table and apply the migrations it lacks, in one transaction.
 * A transaction-scoped advisory lock makes concurrent callers (two processes starting at once) take turns: the
 * second sees the first's work and applies nothing. Returns the versions this call applied.
 */
export async function migrate(
  pool: Pool,
  schema: string,
  migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS,
): Promise<number[]> {
  const quoted = quoteSchema(schema);
  return withPgTransaction(pool, async (client) => {
    // Before `create schema`: even `if not exists` races on the catalog's unique index without it.
    await client.query("select pg_advisory_xact_lock(hashtext($1))", [`keel.migrate:${schema}`]);
    await client.query(`create schema if not exists ${quoted}`);
    await client.query(
      `create table if not exists ${quoted}.schema_migrations (
       version int primary key,
       applied_at timestamptz not null default now()
     )`,
    );
    const applied = new Set(
      (await client.query<{ version: number }>(`select version from ${quoted}.schema_migrations`)).rows.map(
        (row) => row.version,
      ),
    );
    const known = Math.max(0, ...migrations.map((migration) => migration.version));
    const newest = Math.max(0, ...applied);
    if (newest > known) {
      throw new KeelError(
        `postgres store: schema "${schema}" is at version ${newest}, newer than this Keel knows (${known})`,
        {
          code: "store.schema_version",
          hint: "A newer Keel migrated this database; upgrade Keel, or point this process at another schema.",
          context: { schema, version: newest },
        },
      );
    }
    const done: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql.replaceAll("{schema}", quoted));
      await client.query(`insert into ${quoted}.schema_migrations (version) values ($1)`, [
        migration.version,
      ]);
      done.push(migration.version);
    }
    return done;
  });
}
