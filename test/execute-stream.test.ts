import { describe, expect, it } from "vitest";
import {
  defineTool,
  registerPlugin,
  type ToolExecutionRequest,
  type ToolExecutionResult,
  type ToolExecutionStreamPart,
} from "../src/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

describe("the tool stage runs a streaming tool through the executor's executeStream", () => {
  it("turns each delta the executor yields into tool.delta, and its final part into the call's result", async () => {
    const streamed: string[] = [];
    registerPlugin("tool_executor", "stream_only", () => ({
      execute: (request: ToolExecutionRequest): Promise<ToolExecutionResult> =>
        Promise.resolve({ toolId: request.toolId, success: true, data: "via execute", metadata: {} }),
      async *executeStream(request: ToolExecutionRequest): AsyncIterable<ToolExecutionStreamPart> {
        streamed.push(request.toolId);
        yield { type: "delta", text: "from " };
        yield { type: "delta", text: "executeStream" };
        yield {
          type: "result",
          result: { toolId: request.toolId, success: true, data: "streamed", metadata: {} },
        };
      },
    }));
    const spell = defineTool({
      name: "spell",
      description: "",
      execute: () => "unused",
      stream: async function* () {
        yield { type: "delta" as const, text: "never seen" };
      },
    });
    const { runtime } = await runtimeWith(
      [{ toolCalls: [toolCall("spell", {}, "s1"), toolCall("add", { a: 1, b: 1 }, "a1")] }, { text: "ok" }],
      {
        tools: [spell, (await import("./support/harness.js")).addTool],
        tool_executor: { type: "stream_only" },
      },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(streamed).toEqual(["spell"]);
    expect(chunks.filter((chunk) => chunk.kind === "tool.delta").map((chunk) => chunk.payload)).toEqual([
      { toolCallId: "s1", toolId: "spell", text: "from " },
      { toolCallId: "s1", toolId: "spell", text: "executeStream" },
    ]);
    const finished = chunks
      .filter((chunk) => chunk.kind === "tool.finished")
      .map((chunk) => chunk.payload.result);
    // A tool that does not stream still goes through execute.
    expect(finished).toEqual(["streamed", "via execute"]);
    await runtime.close();
  });
});
