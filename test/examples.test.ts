import { describe, expect, it } from "vitest";
import { main as codeFirst } from "../examples/code-first/main.js";

describe("examples run as documented", () => {
  it("code-first: a defineTool tool, a scripted model and a typed answer", async () => {
    expect(await codeFirst()).toEqual({ answer: { sum: 42 }, stopReason: "completed" });
  });
});
