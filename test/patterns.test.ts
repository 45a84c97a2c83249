import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  BasePattern,
  defineTool,
  type FollowupResolution,
  ReactPattern,
  type ResponseRepairDecision,
  registerPlugin,
  type StepAction,
} from "../src/index.js";
import { parsePlan } from "../src/patterns/plan-execute-pattern.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

describe("plan_execute", () => {
  it("plans, then runs each plan step as its own ReAct loop", async () => {
    const { runtime, model } = await runtimeWith(
      [
        { text: "1. Add the numbers\n2. Report the sum" },
        { toolCalls: [toolCall("add", { a: 2, b: 40 })] },
        { text: "The sum is 42" },
        { text: "Final: 42" },
      ],
      { pattern: { type: "plan_execute" } },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "add 2 and 40" }));
    const plan = chunks.find((chunk) => chunk.kind === "pattern.plan_created")!;
    expect(plan.payload.plan).toEqual(["Add the numbers", "Report the sum"]);
    expect(
      chunks.filter((chunk) => chunk.kind === "pattern.step_started").map((chunk) => chunk.payload.planStep),
    ).toEqual(["Add the numbers", "Report the sum"]);
    expect(model.requests[0]!.tools).toEqual([]);
    expect(String(model.requests[0]!.system)).toContain("First make a plan");
    expect(model.requests[1]!.messages.at(-1)).toEqual({
      role: "user",
      content: "Carry out step 1 of 2 of the plan: Add the numbers",
    });
    expect(chunks.at(-1)!.result).toMatchObject({ stopReason: "completed", finalOutput: "Final: 42" });
    await runtime.close();
  });

  it("parses numbered, bulleted and plain plans", () => {
    expect(parsePlan("1) a\n2) b")).toEqual(["a", "b"]);
    expect(parsePlan("- a\n* b\n• c")).toEqual(["a", "b", "c"]);
    expect(parsePlan("just do it\nthen stop")).toEqual(["just do it", "then stop"]);
    expect(parsePlan("   ")).toEqual(["Answer the request"]);
  });
});

describe("pattern helpers", () => {
  it("resolveFollowup answers without a model call", async () => {
    class Cached extends ReactPattern {
      override resolveFollowup(): FollowupResolution {
        return { status: "resolved", output: "from cache" };
      }
    }
    registerPlugin("pattern", "cached", () => () => new Cached());
    const { runtime, model } = await runtimeWith([{ text: "never" }], { pattern: { type: "cached" } });
    const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "again?" });
    expect(result.finalOutput).toBe("from cache");
    expect(model.callCount).toBe(0);
    expect((await runtime.sessionManager.getState("s")).resolvedBy).toBe("resolveFollowup");
    await runtime.close();
  });

  it("repairEmptyResponse supplies the answer for an empty model turn; abstaining keeps the empty text", async () => {
    class Repairing extends ReactPattern {
      override repairEmptyResponse(input: {
        assistantContent: string;
        stopReason: string;
      }): ResponseRepairDecision {
        return { status: "repaired", output: `repaired (${input.stopReason})` };
      }
    }
    registerPlugin("pattern", "repairing", () => () => new Repairing());
    const repaired = await runtimeWith([{ text: "" }], { pattern: { type: "repairing" } });
    expect(await repaired.runtime.run({ agentId: "a", inputText: "?" })).toBe("repaired (end_turn)");
    await repaired.runtime.close();
    const plain = await runtimeWith([{ text: "" }]);
    expect(await plain.runtime.run({ agentId: "a", inputText: "?" })).toBe("");
    await plain.runtime.close();
  });

  it("callTool, callToolBatch, addArtifact and compressContext route through the loop", async () => {
    const upper = defineTool({
      name: "upper",
      description: "",
      inputSchema: z.object({ text: z.string() }),
      execute: ({ text }) => text.toUpperCase(),
    });
    class Scripted extends BasePattern {
      async react(): Promise<StepAction> {
        const single = await this.callTool("add", { a: 1, b: 2 });
        const batch = await this.callToolBatch([
          ["upper", { text: "a" }],
          ["add", { a: 2, b: 2 }],
          ["upper", { text: 3 }],
        ]);
        await this.compressContext();
        this.addArtifact({ name: "report", payload: { single, batch: batch.map(String) } });
        this.emit("custom.note", { ok: true });
        return { type: "final", output: single };
      }
    }
    registerPlugin("pattern", "scripted", () => () => new Scripted());
    const { runtime } = await runtimeWith([], {
      pattern: { type: "scripted" },
      tools: [upper, (await import("./support/harness.js")).addTool],
    });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    const result = chunks.at(-1)!.result!;
    expect(result.finalOutput).toBe(3);
    expect(result.artifacts).toEqual([
      {
        name: "report",
        kind: "generic",
        payload: {
          single: 3,
          batch: [
            "A",
            "4",
            "Error: Invalid arguments for tool 'upper':\n- text: Invalid input: expected string, received number",
          ],
        },
        metadata: {},
      },
    ]);
    const kinds = chunks.map((chunk) => chunk.kind);
    expect(kinds).toContain("tool.batch.started");
    expect(chunks.find((chunk) => chunk.kind === "tool.batch.completed")!.payload).toMatchObject({
      successes: 2,
      failures: 1,
    });
    expect(chunks.find((chunk) => chunk.kind === "artifact")!.payload).toMatchObject({
      name: "report",
      kind: "generic",
    });
    expect(kinds).toContain("custom.note");
    await runtime.close();
  });

  it("callTool rejects with the tool's error", async () => {
    class Failing extends BasePattern {
      async react(): Promise<StepAction> {
        await this.callTool("missing", {});
        return { type: "final", output: "unreachable" };
      }
    }
    registerPlugin("pattern", "failing", () => () => new Failing());
    const { runtime } = await runtimeWith([], { pattern: { type: "failing" } });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("failed");
    expect(result.error).toBe("Tool 'missing' is not available. Available tools: add");
    expect(result.errorDetails?.code).toBe("tool.not_found");
    await runtime.close();
  });

  it("a pattern used before setup says so", () => {
    expect(() => new ReactPattern().context).toThrow("The pattern is used before setup()");
  });
});
