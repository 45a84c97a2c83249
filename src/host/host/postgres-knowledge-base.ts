import type { Pool } from "pg";
import { KeelError } from "../../errors/keel-error.js";
import { importPg } from "../../stores/postgres/import-pg.js";
import { quoteSchema } from "../../stores/postgres/migrations.js";
import { withPgTransaction } from "../../stores/postgres/with-pg-transaction.js";
import {
  distanceOf,
  type KnowledgeBase,
  type KnowledgeDocument,
  type MetadataFilter,
  parseFilters,
  type RetrievalEntry,
  type RetrieveOptions,
} from "./knowledge-base.js";

const TABLE = `
CREATE TABLE IF NOT EXISTS host_knowledge (kb_id text NOT NULL, doc_id text NOT NULL, content text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}', language regconfig NOT NULL, tsv tsvector NOT NULL,
  PRIMARY KEY (kb_id, doc_id));
CREATE INDEX IF NOT EXISTS host_knowledge_tsv ON host_knowledge USING gin (tsv);
`;

const LANGUAGE = /^[a-z_]{1,63}$/;

/** A knowledge base in PostgreSQL, with what it adds to {@link KnowledgeBase}: documents in and out, and `close`. */
export interface PostgresKnowledgeBase extends KnowledgeBase {
  add(documents: KnowledgeDocument | readonly KnowledgeDocument[]): Promise<void>;
  remove(id: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * A knowledge base in PostgreSQL's full-text search: each document's text becomes a `tsvector` in the base's
 * text-search configuration (`english` by default, so words are stemmed and stop words dropped), a query matches
 * documents sharing any of its words, and `ts_rank_cd` orders them. Every base of a schema shares one table, told
 * apart by `kb_id`. Pass a `pool`, or a `connectionString` (the base then owns its pool and `close()` ends it).
 */
export async function createPostgresKnowledgeBase(options: {
  id: string;
  name?: string;
  pool?: Pool;
  connectionString?: string;
  schema?: string;
  /** A PostgreSQL text-search configuration: `english`, `simple`, `german`, …; fixed per document when added. */
  language?: string;
}): Promise<PostgresKnowledgeBase> {
  const language = options.language ?? "english";
  if (!LANGUAGE.test(language) || options.id.length === 0) {
    throw new KeelError(`postgres knowledge base: invalid id or language "${language}"`, {
      code: "store.config",
      hint: "Give a non-empty id and a text-search configuration name such as english or simple",
    });
  }
  const { pool, table, close } = await openKnowledgeTable(options, "host_knowledge", TABLE);
  const { id } = options;
  return {
    id,
    name: options.name ?? id,
    type: "postgres_fts",
    add: async (documents) => {
      const list = Array.isArray(documents) ? documents : [documents as KnowledgeDocument];
      for (const document of list) {
        await pool.query(
          `INSERT INTO ${table} (kb_id, doc_id, content, metadata, language, tsv)
           VALUES ($1, $2, $3, $4, $5::regconfig, to_tsvector($5::regconfig, $3))
           ON CONFLICT (kb_id, doc_id) DO UPDATE SET content = EXCLUDED.content, metadata = EXCLUDED.metadata,
             language = EXCLUDED.language, tsv = EXCLUDED.tsv`,
          [id, document.id, document.text, document.metadata ?? {}, language],
        );
      }
    },
    remove: async (docId) =>
      ((await pool.query(`DELETE FROM ${table} WHERE kb_id = $1 AND doc_id = $2`, [id, docId])).rowCount ??
        0) > 0,
    retrieve: async (query: string, retrieveOptions: RetrieveOptions): Promise<RetrievalEntry[]> => {
      const values: unknown[] = [id, language, query, retrieveOptions.topK];
      const where = parseFilters(retrieveOptions.filters).map((filter) => filterSql(filter, values));
      // plainto_tsquery joins the query's words with AND; a passage that answers a question rarely holds every
      // word of it, so the words are joined with OR and the rank decides.
      const { rows } = await pool.query<{
        doc_id: string;
        content: string;
        metadata: Record<string, unknown>;
        rank: number;
      }>(
        `WITH q AS (SELECT replace(plainto_tsquery($2::regconfig, $3)::text, '&', '|') AS text)
         SELECT doc_id, content, metadata, ts_rank_cd(tsv, q.text::tsquery) AS rank
         FROM ${table}, q WHERE q.text <> '' AND kb_id = $1 AND tsv @@ q.text::tsquery
           ${where.map((clause) => `AND ${clause}`).join(" ")}
         ORDER BY rank DESC, doc_id LIMIT $4`,
        values,
      );
      return rows.map((row) => entryOfRow(row, row.rank, distanceOf(row.rank)));
    },
    close,
  };
}

/** A stored passage as a retrieval entry, with the score its base ranked it by. */
export function entryOfRow(
  row: { doc_id: string; content: string; metadata: Record<string, unknown> },
  score: number,
  distance: number,
): RetrievalEntry {
  return {
    id: row.doc_id,
    content: [{ type: "text", text: row.content }],
    metadata: row.metadata,
    distance,
    score,
  };
}

/**
 * The pool and the table a Postgres knowledge base keeps its documents in, created with its schema when missing
 * (every base of a schema shares the table); `close` ends the pool when the base made it.
 */
export async function openKnowledgeTable(
  options: { pool?: Pool | undefined; connectionString?: string | undefined; schema?: string | undefined },
  name: string,
  ddl: string,
): Promise<{ pool: Pool; table: string; close: () => Promise<void> }> {
  const schema = quoteSchema(options.schema ?? "keel_host");
  const ownPool = options.pool === undefined;
  const pool = options.pool ?? new (await importPg()).Pool({ connectionString: options.connectionString });
  const close = async () => {
    if (ownPool) await pool.end();
  };
  try {
    await withPgTransaction(pool, async (client) => {
      // Bases opened at once would race to create the one table; the lock makes them take turns.
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`keel.${name}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`SET LOCAL search_path TO ${schema}`);
      await client.query(ddl);
    });
  } catch (error) {
    await close();
    throw error;
  }
  return { pool, table: `${schema}.${name}`, close };
}

/** One filter as SQL on the `metadata` column, its values appended to `values` as parameters. */
export function filterSql(filter: MetadataFilter, values: unknown[]): string {
  values.push(filter.field);
  const field = `$${values.length}`;
  values.push(filter.values.map((value) => JSON.stringify(value ?? null)));
  const candidates = `$${values.length}::jsonb[]`;
  const hit = `coalesce(metadata -> ${field}, 'null'::jsonb) = ANY(${candidates})`;
  return filter.operator === "$eq" || filter.operator === "$in" ? hit : `NOT (${hit})`;
}
