/**
 * The implementations of the S1/S4/S5 workload behind one interface: `open()` gives a fresh instance whose
 * `runOnce()` does one whole run (toolSteps × add, then the final text) and checks it did.
 */
import { baselineStepsCheck, runBaselineLoop } from "./baseline-loop.mjs";
import { AGENT_ID, createKeelRuntime, keelTool } from "./keel-runtime.mjs";
import { check } from "./measure.mjs";
import { createToolLoopModel } from "./models.mjs";
import { ADD_SCHEMA, add } from "./tools.mjs";

export function loopImpls(toolSteps) {
  return [keelLoopImpl(toolSteps), baselineLoopImpl(toolSteps)];
}

/**
 * Keel on the workload. `session` is the runtime's session store (the in-memory one when absent), `events` its
 * event bus (the async one when absent); `durable` makes every run durable, and `onOpen(runtime)` runs once per
 * instance before anything is timed.
 */
export function keelLoopImpl(toolSteps, { impl = "keel", session, events, durable = false, onOpen } = {}) {
  const steps = toolSteps + 1;
  return {
    impl,
    async open() {
      const runtime = await createKeelRuntime({
        model: createToolLoopModel({ toolSteps }),
        tools: [keelTool("add", add, ADD_SCHEMA)],
        maxSteps: steps + 5,
        session,
        events,
      });
      const request = { agentId: AGENT_ID, inputText: "Add the numbers.", ...(durable ? { durable } : {}) };
      const runOnce = async () => {
        // No sessionId: a fresh session per run, so the passthrough context starts empty every time.
        const result = await runtime.runDetailed(request);
        if (result.stopReason !== "completed" || result.metadata.steps !== steps) {
          check(
            false,
            `keel run ended ${result.stopReason} after ${result.metadata.steps} steps: ${result.error ?? ""}`,
          );
        }
        return result;
      };
      await onOpen?.(runtime, runOnce);
      return { runOnce, close: () => runtime.close() };
    },
  };
}

/** The hand-written loop on the workload; `onStep(messages)` is called after every step. */
export function baselineLoopImpl(toolSteps, { impl = "hand-written", onStep } = {}) {
  const steps = toolSteps + 1;
  return {
    impl,
    async open() {
      const model = createToolLoopModel({ toolSteps });
      const tools = { add: { execute: add, inputSchema: ADD_SCHEMA } };
      const input = { model, tools, inputText: "Add the numbers.", maxSteps: steps + 5, onStep };
      return {
        async runOnce() {
          const result = await runBaselineLoop(input);
          if (result.steps !== steps) baselineStepsCheck(result, steps);
        },
        close: async () => {},
      };
    },
  };
}
