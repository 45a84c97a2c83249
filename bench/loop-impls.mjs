/**
 * The two implementations of the S1/S5 workload behind one interface: `open()` gives a fresh instance whose
 * `runOnce()` does one whole run (toolSteps × add, then the final text) and checks it did.
 */
import { baselineStepsCheck, runBaselineLoop } from "./baseline-loop.mjs";
import { AGENT_ID, createKeelRuntime, keelTool } from "./keel-runtime.mjs";
import { check } from "./measure.mjs";
import { createToolLoopModel } from "./models.mjs";
import { ADD_SCHEMA, add } from "./tools.mjs";

export function loopImpls(toolSteps) {
  const steps = toolSteps + 1;
  return [
    {
      impl: "keel",
      async open() {
        const runtime = await createKeelRuntime({
          model: createToolLoopModel({ toolSteps }),
          tools: [keelTool("add", add, ADD_SCHEMA)],
          maxSteps: steps + 5,
        });
        const request = { agentId: AGENT_ID, inputText: "Add the numbers." };
        return {
          async runOnce() {
            // No sessionId: a fresh session per run, so the passthrough context starts empty every time.
            const result = await runtime.runDetailed(request);
            if (result.stopReason !== "completed" || result.metadata.steps !== steps) {
              check(
                false,
                `keel run ended ${result.stopReason} after ${result.metadata.steps} steps: ${result.error ?? ""}`,
              );
            }
          },
          close: () => runtime.close(),
        };
      },
    },
    {
      impl: "hand-written",
      async open() {
        const model = createToolLoopModel({ toolSteps });
        const tools = { add: { execute: add, inputSchema: ADD_SCHEMA } };
        const input = { model, tools, inputText: "Add the numbers.", maxSteps: steps + 5 };
        return {
          async runOnce() {
            const result = await runBaselineLoop(input);
            if (result.steps !== steps) baselineStepsCheck(result, steps);
          },
          close: async () => {},
        };
      },
    },
  ];
}
