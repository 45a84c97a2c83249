// A process that runs an agent whose tools return values a JSON encoder cannot take as they are, against a
// persistent store (test/json-tool-results.test.ts). Usage: node json-result-child.mjs <buildDir> <spec as JSON>;
// the spec names the store, the run and the session. `stats` returns a BigInt, a Map, a Set and a Date; `graph`
// returns an object that refers to itself; `note` emits an event of its own whose payload holds a BigInt and a
// cycle (a value no tool-boundary check sees). Prints `@@result <json>` with the run's result and the tool
// messages the model was shown.
import { z } from "zod";
import { childSetup, report, resultSummary } from "./child-common.mjs";

const { spec, keel, scriptedModel } = await childSetup();
const { defineTool, Runtime } = keel;

const tools = [
  defineTool({
    name: "stats",
    description: "Numbers a JSON encoder cannot take as they are",
    inputSchema: z.object({}),
    execute: () => ({
      n: 10n,
      huge: 2n ** 70n,
      tags: new Set(["a", "b"]),
      counts: new Map([["x", 1]]),
      at: new Date("2024-01-02T03:04:05Z"),
    }),
  }),
  defineTool({
    name: "graph",
    description: "A result that refers to itself",
    inputSchema: z.object({}),
    execute: () => {
      const node = { name: "node" };
      node.self = node;
      return node;
    },
  }),
  defineTool({
    name: "note",
    description: "Emits an event of its own",
    inputSchema: z.object({}),
    execute: (_args, ctx) => {
      const payload = { count: 7n };
      payload.again = payload;
      ctx.emitEvent("custom.note", payload);
      return "noted";
    },
  }),
];

const model = scriptedModel([
  {
    toolCalls: [
      { id: "s1", name: "stats", arguments: {} },
      { id: "g1", name: "graph", arguments: {} },
      { id: "n1", name: "note", arguments: {} },
    ],
  },
  { text: "done" },
]);

const runtime = await Runtime.fromDict({
  session: spec.store,
  agents: [{ id: "a", name: "Agent A", tools, llm: model }],
});
const result = await runtime.runDetailed({
  agentId: "a",
  inputText: "go",
  runId: spec.runId,
  sessionId: spec.sessionId,
  durable: spec.durable,
});
report("result", {
  ...resultSummary(result),
  storeError: result.metadata.storeError ?? null,
  shown: model.requests[1]?.messages.filter((message) => message.role === "tool") ?? [],
});
await runtime.close();
