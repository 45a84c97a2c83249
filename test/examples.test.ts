import { describe, expect, it } from "vitest";
import { main as codeFirst } from "../examples/code-first/main.js";
import { main as standaloneRunner } from "../examples/standalone-runner/host.js";

describe("examples run as documented", () => {
  it("code-first: a defineTool tool, a scripted model and a typed answer", async () => {
    expect(await codeFirst()).toEqual({ answer: { sum: 42 }, stopReason: "completed" });
  });

  it("standalone-runner: a runner in plain Node that the Keel host spawns, grants a model and runs", async () => {
    expect(await standaloneRunner()).toEqual({
      runners: ["plugin:example/shouter/default"],
      answer: "AHOY, A KEEL IS A SHIP'S SPINE",
      results: [...Array(7).fill("message.delta"), "state.updated", "message.completed", "run.completed"],
      turns: 1,
    });
  });
});
