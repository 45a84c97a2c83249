// A process whose durable run meets a model rate limit (test/durable-wait.test.ts). Nothing but the run keeps it
// alive: it must not exit while the run waits out `retryAfterMs` before resuming.
// Usage: node rate-limit-child.mjs <buildDir> <spec as JSON>; spec.rateLimitedCall is the model call (1 or 2)
// that answers with a rate limit. Prints `@@result <json>` when the run ends.
import { z } from "zod";
import { childSetup, report, resultSummary } from "./child-common.mjs";

const { spec, keel, scriptedModel } = await childSetup();
const { defineTool, Runtime } = keel;

const add = defineTool({
  name: "add",
  description: "Add two numbers",
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

const answers = [
  { toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }] },
  { text: "The sum is 3" },
];
const limited = { error: { type: "rate_limit", message: "429 slow down", retryAfterMs: 50 } };
// The rate limit takes the place of the call it names; the answers follow in order.
const turns = [...answers];
turns.splice(spec.rateLimitedCall - 1, 0, limited);

const runtime = await Runtime.fromDict({
  agents: [{ id: "a", name: "Agent A", tools: [add], llm: scriptedModel(turns) }],
});
const result = await runtime.runDetailed({ agentId: "a", inputText: "add 1 and 2", durable: true });
await runtime.close();
report("result", { ...resultSummary(result), errorCode: result.errorDetails?.code ?? null });
