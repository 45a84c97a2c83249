import { afterEach, describe, expect, it } from "vitest";
import { AgentApiError, InMemoryKnowledgeBase, lexicalReranker, tokenize } from "../src/host/index.js";
import { binding, collect, createTestHost, message } from "./support/host-scenario.js";
import { langBotErrors } from "./support/langbot-schemas.js";
import { askLibrarian } from "./support/librarian.js";
import { apiCodeOf, attachScriptedRuntime, RUNNER } from "./support/scripted-runtime.js";
import { SHIP_DOCUMENTS } from "./support/ship-documents.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const DOCS = SHIP_DOCUMENTS;

const retrieve = (
  base: InMemoryKnowledgeBase,
  query: string,
  options: Partial<{ topK: number; filters: Record<string, unknown> }> = {},
) => base.retrieve(query, { topK: options.topK ?? 10, filters: options.filters ?? {} });

describe("the builtin knowledge base (BM25 in memory)", () => {
  it("ranks by BM25: a rarer word weighs more, a repeated word more than once, a shorter document more, unrelated ones not at all", async () => {
    const base = new InMemoryKnowledgeBase({ id: "kb", name: "Ships", documents: DOCS });
    const ids = (entries: { id: string }[]) => entries.map((entry) => entry.id);
    // "ship" is in three documents, "rudder" in one (twice): the rudder document leads; of the two that say
    // "ship" once, the shorter one ranks higher (length normalisation).
    expect(ids(await retrieve(base, "ship rudder"))).toEqual(["rudder", "mast", "keel"]);
    expect(ids(await retrieve(base, "cake"))).toEqual(["cake"]);
    expect(await retrieve(base, "submarine")).toEqual([]);
    expect(ids(await retrieve(base, "ship", { topK: 1 }))).toHaveLength(1);
    const [best] = await retrieve(base, "keel spine");
    expect(best).toMatchObject({
      id: "keel",
      content: [{ type: "text", text: DOCS[0]!.text }],
      metadata: { topic: "hull" },
    });
    expect(best!.score).toBeGreaterThan(0);
    expect(best!.distance).toBeGreaterThan(0);
    expect(best!.distance).toBeLessThan(1);
  });

  it("applies metadata filters — equal, $ne, $in, $nin — and refuses one it cannot apply", async () => {
    const base = new InMemoryKnowledgeBase({ id: "kb", documents: DOCS });
    const ids = async (filters: Record<string, unknown>) =>
      (await retrieve(base, "ship cake", { filters })).map((entry) => entry.id).sort();
    expect(await ids({ topic: "hull" })).toEqual(["keel", "rudder"]);
    expect(await ids({ topic: { $ne: "hull" } })).toEqual(["cake", "mast"]);
    expect(await ids({ year: { $in: [2020, 2021] } })).toEqual(["keel", "mast"]);
    expect(await ids({ year: { $nin: [2020, 2021] } })).toEqual(["cake", "rudder"]);
    expect(await ids({ year: null })).toEqual(["cake"]);
    for (const filters of [
      { topic: { $regex: "h.*" } },
      { topic: { $in: "hull" } },
      { topic: { $eq: 1, $ne: 2 } },
    ]) {
      const error = await retrieve(base, "ship", { filters }).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(AgentApiError);
      expect((error as AgentApiError).apiCode).toBe("invalid_argument");
    }
  });

  it("replaces a document added again under its id, forgets a removed one, and splits CJK text into characters", async () => {
    const base = new InMemoryKnowledgeBase({ id: "kb", documents: DOCS });
    base.add({ id: "cake", text: "A ship's galley bakes bread." });
    expect((await retrieve(base, "cake")).map((entry) => entry.id)).toEqual([]);
    expect((await retrieve(base, "galley")).map((entry) => entry.id)).toEqual(["cake"]);
    expect(base.remove("cake")).toBe(true);
    expect(base.size).toBe(3);
    expect(await retrieve(base, "galley")).toEqual([]);
    expect(tokenize("Keel 龙骨 is ship2")).toEqual(["keel", "龙", "骨", "is", "ship2"]);
    base.add({ id: "zh", text: "龙骨是船的脊梁" });
    expect((await retrieve(base, "船的龙骨")).map((entry) => entry.id)).toEqual(["zh"]);
  });

  it("the builtin reranker orders every document by BM25 against the query", async () => {
    const results = await lexicalReranker().rerank(
      "rudder steers",
      ["a mast", "the rudder steers", "rudder"],
      {},
    );
    expect(results.map((result) => result.index)).toEqual([1, 2, 0]);
    expect(results[2]!.relevance_score).toBe(0);
  });
});

function hostWithKnowledge() {
  const ships = new InMemoryKnowledgeBase({ id: "ships", name: "Ship manual", documents: DOCS });
  const secret = new InMemoryKnowledgeBase({ id: "secret", name: "Not for this binding", documents: DOCS });
  const test = createTestHost({
    knowledgeBases: [ships, secret],
    rerankModels: { "rerank-1": lexicalReranker() },
  });
  cleanups.push(() => test.host.close());
  return test;
}

const knowledgeBinding = () =>
  binding({
    runner_id: RUNNER,
    resource_policy: {
      allowed_model_uuids: ["model-1", "rerank-1"],
      allowed_kb_uuids: ["ships", "no-such-kb"],
    },
  });

describe("a host serving knowledge to a runner", () => {
  it("answers not_found for a base an authorize hook granted that the host does not serve", async () => {
    const test = createTestHost({
      knowledgeBases: [new InMemoryKnowledgeBase({ id: "ships", documents: DOCS })],
      authorize: (grant) => ({ ...grant, knowledgeBases: new Set([...grant.knowledgeBases, "ghost"]) }),
    });
    cleanups.push(() => test.host.close());
    const scripted = await attachScriptedRuntime(test.host, { knowledge_bases: ["retrieve"] });
    const running = collect(test.host.run(message("hi"), knowledgeBinding()));
    await expect.poll(() => scripted.runs.length).toBe(1);
    const { context, api, release } = scripted.runs[0]!;
    expect(context.resources.knowledge_bases.map((base) => base.kb_id)).toEqual(["ships", "ghost"]);
    expect(await apiCodeOf(api.knowledge.retrieve("ghost", "ship"))).toBe("not_found");
    release();
    await running;
    expect(test.stores.audit.entries.map((entry) => [entry.resource, entry.result])).toEqual([
      ["ghost", "not_found"],
    ]);
  });

  it("lists the granted knowledge bases by name, retrieves from them and reranks, each call audited", async () => {
    const test = hostWithKnowledge();
    const scripted = await attachScriptedRuntime(test.host, {
      models: ["invoke", "rerank"],
      knowledge_bases: ["retrieve"],
    });
    const running = collect(test.host.run(message("hi"), knowledgeBinding()));
    await expect.poll(() => scripted.runs.length).toBe(1);
    const { context, api, release } = scripted.runs[0]!;
    expect(context.resources.knowledge_bases).toEqual([
      { kb_id: "ships", kb_name: "Ship manual", kb_type: "bm25" },
    ]);
    expect(context.resources.models).toEqual(
      expect.arrayContaining([{ model_id: "rerank-1", model_type: "rerank", provider: "keel" }]),
    );
    expect(langBotErrors("AgentRunContext", context)).toEqual([]);
    expect(langBotErrors("AgentRunContext", context, "langbot-4.11")).toEqual([]);

    const answer = await api.knowledge.retrieve("ships", "rudder", { topK: 2, filters: { topic: "hull" } });
    expect((answer.results as { id: string }[]).map((entry) => entry.id)).toEqual(["rudder"]);
    expect(answer.results).toEqual([
      expect.objectContaining({
        id: "rudder",
        content: [{ type: "text", text: DOCS[2]!.text }],
        score: expect.any(Number),
      }),
    ]);
    const ranked = await api.models.rerank("rerank-1", "mast sails", {
      documents: ["a rudder", "the mast and its sails", "sails"],
      topK: 2,
    });
    expect(ranked.results).toEqual([
      { index: 1, relevance_score: expect.any(Number) },
      { index: 2, relevance_score: expect.any(Number) },
    ]);
    release();
    expect((await running).at(-1)!.type).toBe("run.completed");
    const audited = test.stores.audit.entries.map((entry) => [entry.action, entry.resource, entry.result]);
    expect(audited).toEqual([
      ["retrieve_knowledge_base", "ships", "ok"],
      ["invoke_rerank", "rerank-1", "ok"],
    ]);
  });

  it("refuses a knowledge base outside the binding, an unknown one, a bad argument and a model of the wrong kind, auditing each", async () => {
    const test = hostWithKnowledge();
    const scripted = await attachScriptedRuntime(test.host, {
      models: ["invoke", "rerank"],
      knowledge_bases: ["retrieve"],
    });
    const running = collect(test.host.run(message("hi"), knowledgeBinding()));
    await expect.poll(() => scripted.runs.length).toBe(1);
    const { api, release } = scripted.runs[0]!;
    const codes = [
      await apiCodeOf(api.knowledge.retrieve("secret", "ship")),
      await apiCodeOf(api.knowledge.retrieve("no-such-kb", "ship")),
      await apiCodeOf(api.knowledge.retrieve("ships", "ship", { filters: { topic: { $like: "h%" } } })),
      await apiCodeOf(api.knowledge.retrieve("ships", "ship", { topK: -1 })),
      await apiCodeOf(
        api.models.rerank("rerank-1", "q", { documents: Array.from({ length: 65 }, () => "d") }),
      ),
      await apiCodeOf(api.models.rerank("model-1", "q", { documents: ["d"] })),
      await apiCodeOf(api.models.invoke("rerank-1", [{ role: "user", content: "hi" }])),
    ];
    expect(codes).toEqual([
      "unauthorized",
      "unauthorized",
      "invalid_argument",
      "invalid_argument",
      "invalid_argument",
      "invalid_argument",
      "invalid_argument",
    ]);
    release();
    await running;
    const refused = test.stores.audit.entries.map((entry) => [entry.action, entry.resource, entry.result]);
    expect(refused.slice(0, 2)).toEqual([
      ["retrieve_knowledge_base", "secret", "unauthorized"],
      ["retrieve_knowledge_base", "no-such-kb", "unauthorized"],
    ]);
    expect(refused).toHaveLength(7);
  });

  it("grants no knowledge base to a runner whose manifest does not ask for retrieval, and refuses its calls", async () => {
    const test = hostWithKnowledge();
    const scripted = await attachScriptedRuntime(test.host, { models: ["invoke"] });
    const running = collect(test.host.run(message("hi"), knowledgeBinding()));
    await expect.poll(() => scripted.runs.length).toBe(1);
    const { context, api, release } = scripted.runs[0]!;
    expect(context.resources.knowledge_bases).toEqual([]);
    expect(await apiCodeOf(api.knowledge.retrieve("ships", "ship"))).toBe("unauthorized");
    expect(await apiCodeOf(api.models.rerank("rerank-1", "q", { documents: ["d"] }))).toBe("unauthorized");
    release();
    await running;
    expect(test.stores.audit.entries.map((entry) => entry.result)).toEqual(["unauthorized", "unauthorized"]);
  });
});

describe("a Keel runner agent searching host knowledge", () => {
  it("asks for knowledge retrieval in its manifest and searches the run's granted knowledge base as a tool", async () => {
    const ships = new InMemoryKnowledgeBase({ id: "ships", name: "Ship manual", documents: DOCS });
    const { manifest, results, stores } = await askLibrarian(ships, "what steers a ship?", cleanups);
    expect(manifest.capabilities.knowledge_retrieval).toBe(true);
    expect(manifest.permissions.knowledge_bases).toEqual(["retrieve"]);
    const completed = results.find((result) => result.type === "message.completed");
    expect(JSON.stringify(completed?.data)).toContain("The rudder steers the ship");
    expect(results.at(-1)!.type).toBe("run.completed");
    expect(stores.audit.entries.filter((entry) => entry.action === "retrieve_knowledge_base")).toEqual([
      expect.objectContaining({ resource: "ships", result: "ok" }),
    ]);
  });
});
