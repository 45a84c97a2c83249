// A process that starts, or decides, the approval-gated agent of test/cross-process-decisions.test.ts against a
// persistent store. Usage: node decision-child.mjs <buildDir> <spec as JSON>. The spec names the store, the run,
// the ledger file, whether the run is durable, the process's role (written into the ledger) and the actions to take in order: `start` runs
// the agent, `decide` sends a batch of decisions with `runtime.decide`. Each action prints `@@result <json>`
// with the run's result, or `{ refused: { code, message, hint } }` for a decision the runtime refused.
import { z } from "zod";
import { appendLedger, childSetup, report, resultSummary, toolResults } from "./child-common.mjs";

const { spec, keel, scriptedModel } = await childSetup();
const { defineTool, DecisionError, Runtime } = keel;

const ledger = (ctx, what) => appendLedger(spec.ledger, `${ctx.toolCallId}:${what}@${spec.role}`);

const tools = [
  defineTool({
    name: "pay",
    description: "Pay an amount (needs approval)",
    inputSchema: z.object({ amount: z.number() }),
    approvalMode: "always",
    execute: ({ amount }, ctx) => {
      ledger(ctx, "pay");
      return `paid ${amount}`;
    },
  }),
  defineTool({
    name: "add",
    description: "Add two numbers",
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }, ctx) => {
      ledger(ctx, "add");
      return a + b;
    },
  }),
];

/**
 * The model decides from the transcript alone, so any process continues it alike: `pay(10)`, `add(1, 2)` and
 * `pay(20)` in one step (the payments need approval); once all three have results, an answer built from them.
 */
const model = scriptedModel(
  [
    ({ messages }) => {
      if (toolResults(messages) === 0) {
        return {
          text: "paying",
          toolCalls: [
            { id: "p1", name: "pay", arguments: { amount: 10 } },
            { id: "a1", name: "add", arguments: { a: 1, b: 2 } },
            { id: "p2", name: "pay", arguments: { amount: 20 } },
          ],
        };
      }
      const results = messages.filter((message) => message.role === "tool");
      return {
        text: `Done: ${results.map((message) => `${message.toolCallId}=${message.content}`).join(", ")}`,
      };
    },
  ],
  { whenExhausted: "repeat-last" },
);

const runtime = await Runtime.fromDict({
  session: spec.store,
  agents: [{ id: "a", name: "Agent A", tools, llm: model }],
});

for (const action of spec.actions) {
  if (action.start) {
    const result = await runtime.runDetailed({
      agentId: "a",
      inputText: "pay twice",
      durable: spec.durable,
      runId: spec.runId,
      sessionId: spec.sessionId,
    });
    report("result", resultSummary(result));
    continue;
  }
  try {
    report("result", resultSummary(await runtime.decide({ runId: spec.runId, decisions: action.decide })));
  } catch (error) {
    if (!(error instanceof DecisionError)) throw error;
    report("result", { refused: { code: error.code, message: error.message, hint: error.hint } });
  }
}
await runtime.close();
