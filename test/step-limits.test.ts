import { describe, expect, it } from "vitest";
import { ConfigError, ConfigValidationError, Runtime } from "../src/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

/** A step limit below one step is refused where it is given, the agent's config or the run's budget. */

describe("step limits below 1", () => {
  it("are refused in an agent's config with a hint", async () => {
    for (const maxSteps of [0, -3, 2.5]) {
      const loading = Runtime.fromDict({
        agents: [{ id: "a", name: "A", runtime: { max_steps: maxSteps } }],
      });
      await expect(loading).rejects.toBeInstanceOf(ConfigValidationError);
      await expect(loading).rejects.toMatchObject({
        message: `agents[0].runtime.max_steps: must be a whole number of steps, 1 or more, got ${maxSteps}`,
        hint: expect.stringContaining("give 1 or more"),
      });
    }
  });

  it("are refused in a run's budget before the run starts, and 1 is a limit of one step", async () => {
    const { runtime } = await runtimeWith([{ toolCalls: [toolCall("add", { a: 1, b: 2 })] }, { text: "3" }]);
    for (const maxSteps of [0, -1, 1.5, Number.NaN]) {
      const refused = runtime.runDetailed({ agentId: "a", inputText: "x", budget: { maxSteps } });
      await expect(refused).rejects.toBeInstanceOf(ConfigError);
      await expect(refused).rejects.toMatchObject({
        code: "config.error",
        hint: expect.stringContaining("budget.maxSteps is how many model steps this run may take"),
      });
    }
    await expect(
      collect(runtime.stream({ agentId: "a", inputText: "x", budget: { maxSteps: 0 } })),
    ).rejects.toThrow("budget.maxSteps must be a whole number of steps, 1 or more, got 0");
    expect(await runtime.listRuns()).toEqual([]);
    const one = await runtime.runDetailed({ agentId: "a", inputText: "x", budget: { maxSteps: 1 } });
    expect(one.stopReason).toBe("max_steps");
    expect(one.metadata.steps).toBe(1);
    await runtime.close();
  });
});
