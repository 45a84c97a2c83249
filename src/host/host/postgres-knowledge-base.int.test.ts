import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { resolveConnectionString } from "../../stores/postgres/resolve-connection-string.js";
import type { AgentApiError } from "../wire/api-error.js";
import { createPostgresKnowledgeBase } from "./postgres-knowledge-base.js";

// Runs against the real server: an unreachable one fails these tests rather than skipping them.
const URL = resolveConnectionString();
const SCHEMA = `keel_kb_test_${randomBytes(6).toString("hex")}`;
const pool = new pg.Pool({ connectionString: URL, max: 2 });
afterAll(async () => {
  await pool.query(`drop schema if exists ${SCHEMA} cascade`);
  await pool.query(`drop schema if exists ${SCHEMA}_2 cascade`);
  await pool.end();
});

const DOCS = [
  {
    id: "keel",
    text: "The keel is the spine of a ship, running along the bottom of the hull.",
    metadata: { topic: "hull", year: 2020 },
  },
  { id: "mast", text: "Masts hold the sails of ships upright.", metadata: { topic: "rig", year: 2021 } },
  {
    id: "rudder",
    text: "The rudder steers the ship; a ship without a rudder drifts.",
    metadata: { topic: "hull", year: 2022 },
  },
  { id: "cake", text: "Bake the cake for forty minutes.", metadata: { topic: "kitchen" } },
];

const ids = (entries: { id: string }[]) => entries.map((entry) => entry.id);

describe("a knowledge base in PostgreSQL full-text search", () => {
  it("finds stemmed words, any word of the query, best rank first, in the wire's shape", async () => {
    const base = await createPostgresKnowledgeBase({
      pool,
      schema: SCHEMA,
      id: "ships",
      name: "Ship manual",
    });
    await base.add(DOCS);
    expect(base).toMatchObject({ id: "ships", name: "Ship manual", type: "postgres_fts" });
    // "ships" finds "ship" and "Masts" is found by "mast" (english stemming); "rudder" appears twice in its document.
    const found = await base.retrieve("rudder ships", { topK: 10, filters: {} });
    expect(ids(found)[0]).toBe("rudder");
    expect(ids(found).sort()).toEqual(["keel", "mast", "rudder"]);
    expect(found[0]).toMatchObject({
      content: [{ type: "text", text: DOCS[2]!.text }],
      metadata: { topic: "hull" },
    });
    expect(found[0]!.score).toBeGreaterThan(found[1]!.score!);
    expect(found[0]!.distance).toBeLessThan(found[1]!.distance);
    expect(ids(await base.retrieve("mast", { topK: 10, filters: {} }))).toEqual(["mast"]);
    expect(await base.retrieve("submarine", { topK: 10, filters: {} })).toEqual([]);
    // Only stop words: nothing to look for.
    expect(await base.retrieve("the of a", { topK: 10, filters: {} })).toEqual([]);
    expect(await base.retrieve("ship", { topK: 1, filters: {} })).toHaveLength(1);
  });

  it("applies metadata filters in SQL, refuses one it cannot apply, and keeps bases of one table apart", async () => {
    // Opened at once on a fresh schema: both race to create the one table they share.
    const [base, other] = await Promise.all([
      createPostgresKnowledgeBase({ pool, schema: `${SCHEMA}_2`, id: "filtered" }),
      createPostgresKnowledgeBase({ pool, schema: `${SCHEMA}_2`, id: "other", language: "simple" }),
    ]);
    await base.add(DOCS);
    await other.add({ id: "x", text: "ship ahoy" });
    const filtered = async (filters: Record<string, unknown>) =>
      ids(await base.retrieve("ship cake", { topK: 10, filters })).sort();
    expect(await filtered({ topic: "hull" })).toEqual(["keel", "rudder"]);
    expect(await filtered({ topic: { $ne: "hull" } })).toEqual(["cake", "mast"]);
    expect(await filtered({ year: { $in: [2020, 2021] } })).toEqual(["keel", "mast"]);
    expect(await filtered({ year: { $nin: [2020, 2021] } })).toEqual(["cake", "rudder"]);
    expect(await filtered({ year: null })).toEqual(["cake"]);
    const error = await base
      .retrieve("ship", { topK: 5, filters: { topic: { $gt: 1 } } })
      .catch((thrown) => thrown);
    expect((error as AgentApiError).apiCode).toBe("invalid_argument");
    expect(ids(await other.retrieve("ship", { topK: 10, filters: {} }))).toEqual(["x"]);
    // Replace and remove.
    await base.add({ id: "cake", text: "A ship's galley bakes bread.", metadata: { topic: "kitchen" } });
    expect(ids(await base.retrieve("galley", { topK: 10, filters: {} }))).toEqual(["cake"]);
    expect(await base.remove("cake")).toBe(true);
    expect(await base.remove("cake")).toBe(false);
    expect(await base.retrieve("galley", { topK: 10, filters: {} })).toEqual([]);
  });

  it("refuses an invalid language or id before touching the database", async () => {
    await expect(
      createPostgresKnowledgeBase({ pool, schema: SCHEMA, id: "x", language: "english; drop table x" }),
    ).rejects.toMatchObject({ code: "store.config" });
    await expect(createPostgresKnowledgeBase({ pool, schema: SCHEMA, id: "" })).rejects.toMatchObject({
      code: "store.config",
    });
  });
});
