// A process that runs, or resumes, the durable agent of test/crash-resume.test.ts against a persistent store.
// Usage: node crash-child.mjs <buildDir> <spec as JSON>. The spec names the store, the run, the ledger file and,
// when the run is to be killed, the point to stop at: there the child prints `@@reached <point>` and blocks
// forever, for the parent to SIGKILL it. With `holdAt` and `gate` instead, it prints the same line there and
// goes on once the gate file exists. A run or resume that ends prints `@@result <json>` and exits; a resume the
// runtime refuses prints `@@refused {code, message, hint}` and exits 0.
import { existsSync } from "node:fs";
import { z } from "zod";
import { appendLedger, childSetup, report, resultSummary, toolResults } from "./child-common.mjs";

const { spec, keel, scriptedModel } = await childSetup();
const { defineTool, Runtime } = keel;

/** Tell the parent the point is reached, then never go on: the parent kills the process here. */
function reached(point) {
  if (spec.holdAt === point) {
    process.stdout.write(`@@reached ${point}\n`);
    return new Promise((resolve) => {
      const poll = setInterval(() => {
        if (!existsSync(spec.gate)) return;
        clearInterval(poll);
        resolve();
      }, 5);
    });
  }
  if (spec.crashAt !== point) return Promise.resolve();
  process.stdout.write(`@@reached ${point}\n`);
  // A timer keeps the event loop alive; a bare pending promise would let the process exit by itself.
  setInterval(() => {}, 1 << 30);
  return new Promise(() => {});
}

/** What the tools did, one `<toolCallId>:<phase>` line each, written synchronously so a kill cannot lose it. */
function ledger(toolCallId, phase) {
  appendLedger(spec.ledger, `${toolCallId}:${phase}`);
}

const tools = [
  defineTool({
    name: "add",
    description: "Add two numbers",
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }, ctx) => {
      ledger(ctx.toolCallId, "start");
      ledger(ctx.toolCallId, "done");
      return a + b;
    },
  }),
  defineTool({
    name: "record",
    description: "Record a value somewhere outside",
    inputSchema: z.object({ value: z.string() }),
    durableIdempotent: spec.recordIdempotent,
    execute: async ({ value }, ctx) => {
      ledger(ctx.toolCallId, "start");
      await reached("mid-tool");
      ledger(ctx.toolCallId, "done");
      return `recorded ${value}`;
    },
  }),
];

/**
 * The model decides from the transcript alone, so any process continues it alike: `add(1, 2)`; then
 * `record("x")` and `add(3, 4)` in one step; then the answer.
 */
const model = scriptedModel(
  [
    ({ messages }) => {
      switch (toolResults(messages)) {
        case 0:
          return { toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }] };
        case 1:
          return {
            text: "recording",
            toolCalls: [
              { id: "c2", name: "record", arguments: { value: "x" } },
              { id: "c3", name: "add", arguments: { a: 3, b: 4 } },
            ],
          };
        default:
          return { text: "All done: 3 and 7" };
      }
    },
  ],
  { whenExhausted: "repeat-last" },
);

const hooks = [
  {
    // c3 has returned and its result is recorded in memory; the checkpoint that stores it is not written yet.
    afterToolExecute: (ctx) => (ctx.call?.id === "c3" ? reached("after-result") : undefined),
  },
];

const runtime = await Runtime.fromDict({
  session: spec.store,
  agents: [{ id: "a", name: "Agent A", tools, llm: model, hooks }],
});

// The first checkpoint of step 2 holds the model's answer (c2 and c3), before either runs.
const isStepTwoAnswer = (state) =>
  state.phase === "tools" && state.step === 2 && state.toolCalls.every((call) => call.status === "new");
const store = runtime.sessionManager;
const createCheckpoint = store.createCheckpoint.bind(store);
store.createCheckpoint = async (sessionId, checkpoint) => {
  const answer = isStepTwoAnswer(checkpoint.state);
  // Events and the run's messages are stored by now; the checkpoint, the commit point, is not.
  if (answer) await reached("mid-checkpoint");
  const stored = await createCheckpoint(sessionId, checkpoint);
  if (answer) await reached("after-model");
  return stored;
};
// A store that commits a checkpoint with its events and messages in one write (CheckpointCommitter) gets the
// same two points. Mid-checkpoint is then what a crash between writes that are not one leaves (the jsonl_file
// store's run file and session file, or a store without the ability): the step's events and messages without
// its checkpoint. The child writes them as the separate calls would, then stops.
if (typeof store.commitCheckpoint === "function") {
  const commitCheckpoint = store.commitCheckpoint.bind(store);
  store.commitCheckpoint = async (commit) => {
    const answer = isStepTwoAnswer(commit.checkpoint.state);
    if (answer && spec.crashAt === "mid-checkpoint") {
      await store.appendEvents(commit.runId, commit.events);
      const { messages } = commit;
      if (messages !== null) await store.saveRunMessages(commit.runId, messages.fromIndex, messages.items);
      await reached("mid-checkpoint");
    }
    const stored = await commitCheckpoint(commit);
    if (answer) await reached("after-model");
    return stored;
  };
}

// A finished run gives the session its messages, then stores its last events, then its final record.
const appendMessages = store.appendMessages.bind(store);
store.appendMessages = async (sessionId, messages) => {
  await appendMessages(sessionId, messages);
  await reached("after-session-append");
};
const saveRun = store.saveRun.bind(store);
store.saveRun = async (record) => {
  if (record.status === "done") await reached("before-final-record");
  await saveRun(record);
};

let result;
try {
  result =
    spec.mode === "resume"
      ? await runtime.resumeRun(spec.runId)
      : await runtime.runDetailed({
          agentId: "a",
          inputText: "go",
          durable: true,
          runId: spec.runId,
          sessionId: spec.sessionId,
        });
} catch (error) {
  if (spec.mode !== "resume" || typeof error?.code !== "string") throw error;
  await runtime.close();
  report("refused", { code: error.code, message: error.message, hint: error.hint ?? null });
}
if (result !== undefined) {
  await runtime.close();
  report("result", resultSummary(result));
}
