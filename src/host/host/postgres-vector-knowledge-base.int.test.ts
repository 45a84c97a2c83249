import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { hashedEmbedder, SYNONYMS } from "../../../test/support/hashed-embedder.js";
import { SHIP_DOCUMENTS as VECTOR_DOCS } from "../../../test/support/ship-documents.js";
import { resolveConnectionString } from "../../stores/postgres/resolve-connection-string.js";
import { EMBEDDING_INVALID, type Embedder } from "./embedder.js";
import { createPostgresVectorKnowledgeBase } from "./postgres-vector-knowledge-base.js";
import { InMemoryVectorKnowledgeBase } from "./vector-knowledge-base.js";

// Runs against the real server: an unreachable one fails these tests rather than skipping them.
const URL = resolveConnectionString();
const SCHEMA = `keel_vkb_test_${randomBytes(6).toString("hex")}`;
const pool = new pg.Pool({ connectionString: URL, max: 2 });
afterAll(async () => {
  await pool.query(`drop schema if exists ${SCHEMA} cascade`);
  await pool.end();
});

const QUERIES: [string, Record<string, unknown>][] = [
  ["what steers a vessel", {}],
  ["the bottom of a boat", { topic: "hull" }],
  ["sails", { year: { $nin: [null, 2020] } }],
  ["cake", { topic: { $ne: "hull" } }],
  ["ship", { topic: { $in: ["rig", "kitchen"] } }],
];

describe("a vector knowledge base in PostgreSQL (real[] ranked in SQL)", () => {
  it("ranks and filters as the in-memory base does, scores equal to float precision", async () => {
    const embedder = hashedEmbedder({ synonyms: SYNONYMS });
    const base = await createPostgresVectorKnowledgeBase({ pool, schema: SCHEMA, id: "ships", embedder });
    const memory = new InMemoryVectorKnowledgeBase({ id: "ships", embedder });
    await base.add(VECTOR_DOCS);
    await memory.add(VECTOR_DOCS);
    expect(base.type).toBe("postgres_vector");
    for (const [query, filters] of QUERIES) {
      for (const topK of [1, 3, 10]) {
        const [inSql, inMemory] = [
          await base.retrieve(query, { topK, filters }),
          await memory.retrieve(query, { topK, filters }),
        ];
        expect(
          inSql.map((entry) => entry.id),
          `${query} ${topK}`,
        ).toEqual(inMemory.map((entry) => entry.id));
        for (const [index, entry] of inSql.entries()) {
          // real[] holds single-precision floats.
          expect(entry.score).toBeCloseTo(inMemory[index]!.score!, 5);
          expect(entry.content).toEqual(inMemory[index]!.content);
          expect(entry.metadata).toEqual(inMemory[index]!.metadata);
        }
      }
    }
    expect(await base.retrieve("?!", { topK: 5, filters: {} })).toEqual([]);
    await expect(base.retrieve("ship", { topK: 5, filters: { year: { $gt: 1 } } })).rejects.toMatchObject({
      apiCode: "invalid_argument",
    });
  });

  it("keeps bases apart in one table, replaces and removes documents, and adds none of a failed batch", async () => {
    const embedder = hashedEmbedder({ synonyms: SYNONYMS });
    const [ships, other] = await Promise.all(
      ["fleet", "galley"].map((id) =>
        createPostgresVectorKnowledgeBase({ pool, schema: SCHEMA, id, embedder }),
      ),
    );
    await ships!.add(VECTOR_DOCS.slice(0, 3));
    await other!.add(VECTOR_DOCS.slice(3));
    expect((await ships!.retrieve("cake", { topK: 10, filters: {} })).map((entry) => entry.id)).not.toContain(
      "cake",
    );
    await ships!.add({ id: "mast", text: "A boat's mast", metadata: { topic: "rig" } });
    expect((await ships!.retrieve("mast", { topK: 1, filters: {} }))[0]!.content[0]!.text).toBe(
      "A boat's mast",
    );
    expect(await ships!.remove("mast")).toBe(true);
    expect(await ships!.remove("mast")).toBe(false);
    // A second batch from a model of another length, and a batch whose embedder fails half way: nothing added.
    const narrow = await createPostgresVectorKnowledgeBase({
      pool,
      schema: SCHEMA,
      id: "fleet",
      embedder: hashedEmbedder({ dimensions: 8 }),
    });
    await expect(narrow.add({ id: "new", text: "new ship", metadata: {} })).rejects.toMatchObject({
      code: EMBEDDING_INVALID,
    });
    let calls = 0;
    const failing: Embedder = {
      embed: async (texts) => {
        if (calls++ > 0) throw new Error("the provider is down");
        return embedder.embed(texts);
      },
    };
    const flaky = await createPostgresVectorKnowledgeBase({
      pool,
      schema: SCHEMA,
      id: "fleet",
      embedder: failing,
      batchSize: 1,
    });
    await expect(
      flaky.add([
        { id: "a", text: "a ship" },
        { id: "b", text: "b ship" },
      ]),
    ).rejects.toThrow(/down/);
    const { rows } = await pool.query(
      `select doc_id from ${SCHEMA}.host_knowledge_vectors where kb_id = 'fleet' order by doc_id`,
    );
    expect(rows.map((row: { doc_id: string }) => row.doc_id)).toEqual(["keel", "rudder"]);
  });
});
