import { describe, expect, it } from "vitest";
import {
  BasePattern,
  BaseTool,
  type BatchItem,
  type BatchResult,
  type Message,
  registerPlugin,
  type StepAction,
  type ToolContext,
  type ToolMessage,
} from "../src/index.js";
import { batchesNatively } from "../src/tools/batch-tool-calls.js";
import { addTool, collect, runtimeWith, toolCall } from "./support/harness.js";

/** Reads many files in one go; answers in reverse order, so only the item ids can map results back. */
class ReadMany extends BaseTool<{ path: string }> {
  readonly name = "read";
  readonly description = "Read a file";
  batches: BatchItem<{ path: string }>[][] = [];
  singles: string[] = [];

  override schema() {
    return { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
  }

  invoke(params: { path: string }): string {
    this.singles.push(params.path);
    return `contents of ${params.path}`;
  }

  override async invokeBatch(
    items: BatchItem<{ path: string }>[],
    _ctx: ToolContext,
  ): Promise<BatchResult[]> {
    this.batches.push(items);
    return items
      .map((item): BatchResult => {
        if (item.params.path === "missing")
          return { itemId: item.itemId, success: false, error: "no such file: missing" };
        return { itemId: item.itemId, success: true, data: `contents of ${item.params.path}` };
      })
      .reverse();
  }
}

/** A BaseTool that keeps the default invokeBatch (which only loops invoke). */
class Plain extends BaseTool {
  readonly name = "plain";
  readonly description = "";
  calls = 0;
  invoke(): string {
    return `plain ${++this.calls}`;
  }
}

function toolMessages(transcript: readonly Message[]): ToolMessage[] {
  return transcript.filter((message): message is ToolMessage => message.role === "tool");
}

const threeReads = {
  toolCalls: [
    toolCall("read", { path: "a.txt" }, "c1"),
    toolCall("read", { path: "b.txt" }, "c2"),
    toolCall("read", { path: "c.txt" }, "c3"),
  ],
};

describe("batch tools: several calls of one tool in a step make one invokeBatch", () => {
  it("calls invokeBatch once with the three items, and maps each result back to its call by itemId", async () => {
    const read = new ReadMany();
    const { runtime, model } = await runtimeWith([threeReads, { text: "ok" }], { tools: [read] });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(chunks.at(-1)!.result!.stopReason).toBe("completed");
    expect(read.batches).toEqual([
      [
        { itemId: "c1", params: { path: "a.txt" } },
        { itemId: "c2", params: { path: "b.txt" } },
        { itemId: "c3", params: { path: "c.txt" } },
      ],
    ]);
    expect(read.singles).toEqual([]);
    expect(
      toolMessages(model.requests[1]!.messages).map((message) => [message.toolCallId, message.content]),
    ).toEqual([
      ["c1", "contents of a.txt"],
      ["c2", "contents of b.txt"],
      ["c3", "contents of c.txt"],
    ]);
    // Each call still has its own events.
    expect(
      chunks.filter((chunk) => chunk.kind === "tool.started").map((chunk) => chunk.payload.toolCallId),
    ).toEqual(["c1", "c2", "c3"]);
    expect(
      chunks
        .filter((chunk) => chunk.kind === "tool.finished")
        .map((chunk) => [chunk.payload.toolCallId, chunk.payload.result]),
    ).toEqual([
      ["c1", "contents of a.txt"],
      ["c2", "contents of b.txt"],
      ["c3", "contents of c.txt"],
    ]);
    await runtime.close();
  });

  it("an item that fails fails only its own call", async () => {
    const read = new ReadMany();
    const { runtime, model } = await runtimeWith(
      [
        {
          toolCalls: [
            toolCall("read", { path: "a.txt" }, "c1"),
            toolCall("read", { path: "missing" }, "c2"),
            toolCall("read", { path: "c.txt" }, "c3"),
          ],
        },
        { text: "ok" },
      ],
      { tools: [read] },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(read.batches).toHaveLength(1);
    const messages = toolMessages(model.requests[1]!.messages);
    expect(messages.map((message) => message.isError === true)).toEqual([false, true, false]);
    expect(JSON.parse(messages[1]!.content).error).toEqual({
      code: "tool.error",
      message: "no such file: missing",
    });
    expect(
      chunks.find((chunk) => chunk.kind === "tool.finished" && chunk.payload.toolCallId === "c2")!.payload,
    ).toMatchObject({ code: "tool.error", error: "no such file: missing" });
    expect(chunks.at(-1)!.result!.usage.toolCalls).toBe(3);
    await runtime.close();
  });

  it("groups by tool: other calls of the step run as before, and the results keep the model's order", async () => {
    const read = new ReadMany();
    const { runtime, model } = await runtimeWith(
      [
        {
          toolCalls: [
            toolCall("read", { path: "a.txt" }, "c1"),
            toolCall("add", { a: 1, b: 2 }, "c2"),
            toolCall("read", { path: "b.txt" }, "c3"),
          ],
        },
        { text: "ok" },
      ],
      { tools: [read, addTool] },
    );
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(read.batches.map((items) => items.map((item) => item.itemId))).toEqual([["c1", "c3"]]);
    expect(
      toolMessages(model.requests[1]!.messages).map((message) => [message.toolCallId, message.content]),
    ).toEqual([
      ["c1", "contents of a.txt"],
      ["c2", "3"],
      ["c3", "contents of b.txt"],
    ]);
    await runtime.close();
  });

  it("parallel mode (concurrent executor) sends one batch too", async () => {
    const read = new ReadMany();
    const { runtime, model } = await runtimeWith([{ ...threeReads }, { text: "ok" }], {
      tools: [read],
      tool_executor: { type: "concurrent_batch" },
    });
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(read.batches).toHaveLength(1);
    expect(toolMessages(model.requests[1]!.messages).map((message) => message.content)).toEqual([
      "contents of a.txt",
      "contents of b.txt",
      "contents of c.txt",
    ]);
    await runtime.close();
  });

  it("callToolBatch groups by tool: one invokeBatch, results in input order, tool.batch.* events", async () => {
    const read = new ReadMany();
    let batch: unknown[] = [];
    class Reader extends BasePattern {
      async react(): Promise<StepAction> {
        batch = await this.callToolBatch([
          ["read", { path: "a.txt" }],
          ["add", { a: 2, b: 2 }],
          ["read", { path: "missing" }],
          ["read", { path: "b.txt" }],
        ]);
        return { type: "final", output: "read" };
      }
    }
    registerPlugin("pattern", "batch_reader", () => () => new Reader());
    const { runtime } = await runtimeWith([], { pattern: { type: "batch_reader" }, tools: [read, addTool] });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(chunks.at(-1)!.result!.stopReason).toBe("completed");
    expect(read.batches.map((items) => items.map((item) => item.params.path))).toEqual([
      ["a.txt", "missing", "b.txt"],
    ]);
    expect(batch.map(String)).toEqual([
      "contents of a.txt",
      "4",
      "Error: no such file: missing",
      "contents of b.txt",
    ]);
    expect(chunks.find((chunk) => chunk.kind === "tool.batch.completed")!.payload).toMatchObject({
      successes: 3,
      failures: 1,
    });
    await runtime.close();
  });

  it("a BaseTool's default invokeBatch is not a native batch: its calls run one by one", async () => {
    const plain = new Plain();
    expect(batchesNatively(plain)).toBe(false);
    expect(batchesNatively(new ReadMany())).toBe(true);
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("plain", {}, "p1"), toolCall("plain", {}, "p2")] }, { text: "ok" }],
      { tools: [plain] },
    );
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(toolMessages(model.requests[1]!.messages).map((message) => message.content)).toEqual([
      "plain 1",
      "plain 2",
    ]);
    await runtime.close();
  });
});
