import { afterEach, describe, expect, it } from "vitest";
import {
  createHybridKnowledgeBase,
  EMBEDDING_INVALID,
  type Embedder,
  InMemoryKnowledgeBase,
  InMemoryVectorKnowledgeBase,
  type KnowledgeBase,
} from "../src/host/index.js";
import { cosineOf, hashedEmbedder, SYNONYMS } from "./support/hashed-embedder.js";
import { collect, createTestHost, message } from "./support/host-scenario.js";
import { askLibrarian } from "./support/librarian.js";
import { apiCodeOf, attachScriptedRuntime, RUNNER } from "./support/scripted-runtime.js";
import { SHIP_DOCUMENTS as VECTOR_DOCS } from "./support/ship-documents.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const ids = (entries: { id: string }[]) => entries.map((entry) => entry.id);
const search = (base: KnowledgeBase, query: string, options: { topK?: number; filters?: object } = {}) =>
  base.retrieve(query, { topK: options.topK ?? 10, filters: { ...options.filters } });

async function shipBase(embedder: Embedder = hashedEmbedder({ synonyms: SYNONYMS })) {
  const base = new InMemoryVectorKnowledgeBase({ id: "ships", name: "Ship manual", embedder, batchSize: 3 });
  await base.add(VECTOR_DOCS);
  return base;
}

describe("the in-memory vector knowledge base", () => {
  it("ranks every document by the cosine of its embedding with the query's, exactly", async () => {
    const embedder = hashedEmbedder({ synonyms: SYNONYMS });
    const base = await shipBase(embedder);
    // Four documents in batches of three: two calls.
    expect(embedder.calls).toEqual([3, 1]);
    const found = await search(base, "what steers a vessel");
    expect(found[0]!.id).toBe("rudder");
    for (const entry of found) {
      const text = VECTOR_DOCS.find((document) => document.id === entry.id)!.text;
      expect(entry.score).toBeCloseTo(await cosineOf(embedder, "what steers a vessel", text), 12);
      expect(entry.distance).toBeCloseTo(1 - entry.score!, 12);
    }
    expect(found.map((entry) => entry.score)).toEqual(
      [...found.map((entry) => entry.score)].sort((a, b) => b! - a!),
    );
    // Nearest neighbours: the unrelated document comes last, with a cosine of 0, rather than not at all.
    expect(found.at(-1)).toMatchObject({ id: "cake", score: 0, distance: 1 });
    // The text itself is as near as it gets; a query of no words is near nothing.
    expect(await search(base, VECTOR_DOCS[1]!.text, { topK: 1 })).toEqual([
      {
        id: "mast",
        content: [{ type: "text", text: VECTOR_DOCS[1]!.text }],
        metadata: VECTOR_DOCS[1]!.metadata,
        distance: expect.closeTo(0, 12),
        score: expect.closeTo(1, 12),
      },
    ]);
    expect(await search(base, "?!")).toEqual([]);
  });

  it("applies the lexical bases' filters before top_k and refuses one it cannot apply", async () => {
    const base = await shipBase();
    expect(ids(await search(base, "ship", { filters: { topic: "hull" } })).sort()).toEqual([
      "keel",
      "rudder",
    ]);
    expect(ids(await search(base, "ship", { filters: { topic: { $ne: "hull" } } })).sort()).toEqual([
      "cake",
      "mast",
    ]);
    expect(ids(await search(base, "ship", { filters: { year: { $in: [2021, 2022] } } })).sort()).toEqual([
      "mast",
      "rudder",
    ]);
    // An absent field equals null, so $nin [null] keeps only documents that have the field.
    expect(ids(await search(base, "ship", { filters: { year: { $nin: [null, 2020] } } })).sort()).toEqual([
      "mast",
      "rudder",
    ]);
    expect(ids(await search(base, "ship", { topK: 1, filters: { topic: "kitchen" } }))).toEqual(["cake"]);
    await expect(search(base, "ship", { filters: { year: { $gt: 2020 } } })).rejects.toMatchObject({
      apiCode: "invalid_argument",
    });
  });

  it("replaces a document added again, forgets a removed one, and adds nothing from an embedder that breaks its contract", async () => {
    const base = await shipBase();
    await base.add({ id: "cake", text: "A boat of cake", metadata: {} });
    expect(base.size).toBe(4);
    expect((await search(base, "cake", { topK: 1 }))[0]!.content[0]!.text).toBe("A boat of cake");
    expect(base.remove("cake")).toBe(true);
    expect(ids(await search(base, "cake"))).not.toContain("cake");
    const short: Embedder = { embed: async (texts) => texts.slice(1).map(() => [1]) };
    const ragged: Embedder = {
      embed: async (texts) => texts.map((_text, index) => [1, ...Array(index).fill(0)]),
    };
    const nan: Embedder = { embed: async (texts) => texts.map(() => [Number.NaN]) };
    for (const embedder of [short, ragged, nan]) {
      const broken = new InMemoryVectorKnowledgeBase({ id: "broken", embedder });
      await expect(broken.add(VECTOR_DOCS)).rejects.toMatchObject({ code: EMBEDDING_INVALID });
      expect(broken.size).toBe(0);
    }
    // Another model's vectors (another length) do not mix with the ones the base holds.
    const other = new InMemoryVectorKnowledgeBase({
      id: "ships",
      embedder: hashedEmbedder({ dimensions: 8 }),
    });
    await other.add(VECTOR_DOCS[0]!);
    const wider = hashedEmbedder({ dimensions: 16 });
    (other as unknown as { embedder: Embedder }).embedder = wider;
    await expect(other.add(VECTOR_DOCS[1]!)).rejects.toMatchObject({ code: EMBEDDING_INVALID });
    expect(other.size).toBe(1);
  });
});

describe("a hybrid knowledge base", () => {
  it("fuses a lexical and a vector base's ranks: Σ 1 / (60 + rank)", async () => {
    const lexical = new InMemoryKnowledgeBase({ id: "words", documents: VECTOR_DOCS });
    const vector = await shipBase();
    const hybrid = createHybridKnowledgeBase({ id: "both", bases: [lexical, vector] });
    const query = "vessel steers";
    const [byWords, byMeaning] = [await search(lexical, query), await search(vector, query)];
    // The lexical base misses "vessel" but has "steers"; the vector base has both.
    expect(ids(byWords)).toEqual(["rudder"]);
    const fused = await search(hybrid, query, { topK: 3 });
    const expected = new Map<string, number>();
    for (const ranking of [byWords, byMeaning])
      for (const [rank, entry] of ranking.entries())
        expected.set(entry.id, (expected.get(entry.id) ?? 0) + 1 / (60 + rank + 1));
    const best = [...expected].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 3);
    expect(fused.map((entry) => [entry.id, entry.score])).toEqual(best);
    expect(fused[0]!.id).toBe("rudder");
    expect(ids(await search(hybrid, query, { filters: { topic: "rig" } }))).toEqual(["mast"]);
    expect(() => createHybridKnowledgeBase({ id: "none", bases: [] })).toThrow(/one base or more/);
  });
});

describe("a vector knowledge base behind the host", () => {
  it("answers retrieve_knowledge_base through the proxy as the lexical bases do", async () => {
    const test = createTestHost({ knowledgeBases: [await shipBase()] });
    cleanups.push(() => test.host.close());
    const scripted = await attachScriptedRuntime(test.host, { knowledge_bases: ["retrieve"] });
    const running = collect(
      test.host.run(message("hi"), {
        binding_id: "b",
        runner_id: RUNNER,
        resource_policy: { allowed_kb_uuids: ["ships"] },
      }),
    );
    await expect.poll(() => scripted.runs.length).toBe(1);
    const { context, api, release } = scripted.runs[0]!;
    expect(context.resources.knowledge_bases).toEqual([
      { kb_id: "ships", kb_name: "Ship manual", kb_type: "vector" },
    ]);
    const answer = await api.knowledge.retrieve("ships", "what steers a boat", {
      topK: 1,
      filters: { topic: { $in: ["hull"] } },
    });
    expect(answer.results).toEqual([
      expect.objectContaining({ id: "rudder", content: [{ type: "text", text: VECTOR_DOCS[2]!.text }] }),
    ]);
    expect(
      await apiCodeOf(api.knowledge.retrieve("ships", "boat", { filters: { topic: { $like: "h" } } })),
    ).toBe("invalid_argument");
    release();
    await running;
    expect(test.stores.audit.entries.map((entry) => [entry.resource, entry.result])).toEqual([
      ["ships", "ok"],
      ["ships", "invalid_argument"],
    ]);
  });

  it("serves a Keel runner's host_knowledge tool unchanged", async () => {
    const { results } = await askLibrarian(await shipBase(), "what steers a vessel?", cleanups);
    const completed = results.find((result) => result.type === "message.completed");
    expect(JSON.stringify(completed?.data)).toContain("The rudder steers the ship");
    expect(results.at(-1)!.type).toBe("run.completed");
  });
});
