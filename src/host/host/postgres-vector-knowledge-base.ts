import type { Pool } from "pg";
import { KeelError } from "../../errors/keel-error.js";
import { withPgTransaction } from "../../stores/postgres/with-pg-transaction.js";
import { checkVectorLength, cosineDistance, type Embedder, embedUnitVectors } from "./embedder.js";
import { type KnowledgeDocument, parseFilters, type RetrievalEntry } from "./knowledge-base.js";
import {
  entryOfRow,
  filterSql,
  openKnowledgeTable,
  type PostgresKnowledgeBase,
} from "./postgres-knowledge-base.js";
import { DEFAULT_EMBED_BATCH } from "./vector-knowledge-base.js";

const TABLE = `
CREATE TABLE IF NOT EXISTS host_knowledge_vectors (kb_id text NOT NULL, doc_id text NOT NULL,
  content text NOT NULL, metadata jsonb NOT NULL DEFAULT '{}', embedding real[] NOT NULL,
  PRIMARY KEY (kb_id, doc_id));
`;

/**
 * A knowledge base of embeddings in PostgreSQL without the pgvector extension: each document's unit vector is a
 * `real[]`, and a query ranks the base's documents that pass the filters by their dot product with the query's
 * unit vector (their cosine), computed in SQL, exactly, over every such row — no index, so a query reads all of
 * a base's rows (linear in its size and in the vectors' length); what it saves is shipping them to the host.
 * Every base of a schema shares one table, told apart by `kb_id`. Pass a `pool`, or a `connectionString` (the
 * base then owns its pool and `close()` ends it).
 */
export async function createPostgresVectorKnowledgeBase(options: {
  id: string;
  name?: string;
  embedder: Embedder;
  pool?: Pool;
  connectionString?: string;
  schema?: string;
  /** Texts sent to the embedder in one call; 64. */
  batchSize?: number;
}): Promise<PostgresKnowledgeBase> {
  if (options.id.length === 0) {
    throw new KeelError("postgres vector knowledge base: an empty id", {
      code: "store.config",
      hint: "Give the base a non-empty id",
    });
  }
  const { pool, table, close } = await openKnowledgeTable(options, "host_knowledge_vectors", TABLE);
  const { id, embedder } = options;
  const batchSize = options.batchSize ?? DEFAULT_EMBED_BATCH;
  return {
    id,
    name: options.name ?? id,
    type: "postgres_vector",
    add: async (documents) => {
      const list = Array.isArray(documents) ? documents : [documents as KnowledgeDocument];
      const texts = list.map((document) => document.text);
      const vectors = await embedUnitVectors(embedder, texts, { batchSize });
      // One transaction: a failure part way adds none of the documents.
      await withPgTransaction(pool, async (client) => {
        const { rows } = await client.query<{ length: number }>(
          `SELECT cardinality(embedding) AS length FROM ${table} WHERE kb_id = $1 LIMIT 1`,
          [id],
        );
        checkVectorLength(rows[0]?.length, vectors);
        for (const [index, document] of list.entries()) {
          await client.query(
            `INSERT INTO ${table} (kb_id, doc_id, content, metadata, embedding) VALUES ($1, $2, $3, $4, $5::real[])
             ON CONFLICT (kb_id, doc_id) DO UPDATE SET content = EXCLUDED.content, metadata = EXCLUDED.metadata,
               embedding = EXCLUDED.embedding`,
            [id, document.id, document.text, document.metadata ?? {}, Array.from(vectors[index]!)],
          );
        }
      });
    },
    remove: async (docId) =>
      ((await pool.query(`DELETE FROM ${table} WHERE kb_id = $1 AND doc_id = $2`, [id, docId])).rowCount ??
        0) > 0,
    retrieve: async (query, retrieveOptions): Promise<RetrievalEntry[]> => {
      const filters = parseFilters(retrieveOptions.filters);
      const [vector] = await embedUnitVectors(embedder, [query], {
        batchSize: 1,
        signal: retrieveOptions.signal,
      });
      // A query that embeds to nothing (no words the embedder knows) is similar to nothing.
      if (!vector?.some((value) => value !== 0)) return [];
      const values: unknown[] = [id, Array.from(vector), retrieveOptions.topK];
      const where = filters.map((filter) => `AND ${filterSql(filter, values)}`).join(" ");
      const { rows } = await pool.query<{
        doc_id: string;
        content: string;
        metadata: Record<string, unknown>;
        cosine: number;
      }>(
        `SELECT doc_id, content, metadata,
           (SELECT sum(d::float8 * q::float8) FROM unnest(embedding, $2::float8[]) AS pair(d, q)) AS cosine
         FROM ${table} WHERE kb_id = $1 AND cardinality(embedding) = cardinality($2::float8[]) ${where}
         ORDER BY cosine DESC, doc_id LIMIT $3`,
        values,
      );
      return rows.map((row) => entryOfRow(row, row.cosine, cosineDistance(row.cosine)));
    },
    close,
  };
}
