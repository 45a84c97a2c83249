import { describe, expect, it } from "vitest";
import {
  isLanguageModel,
  type ModelRequest,
  type ModelStreamPart,
  type ModelToolSpec,
} from "../../../contracts/language-model.js";
import type { Message } from "../../../contracts/message.js";
import { EchoModel } from "./echo-model.js";

async function collect(parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const collected: ModelStreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

const searchTool: ModelToolSpec = {
  name: "search",
  description: "Search",
  inputSchema: { type: "object", properties: { query: { type: "string" } } },
};

function call(messages: Message[], tools?: ModelToolSpec[]): ModelRequest {
  return tools ? { messages, options: {}, tools } : { messages, options: {} };
}

describe("EchoModel", () => {
  it("is the mock-echo language model", () => {
    const model = new EchoModel();
    expect(isLanguageModel(model)).toBe(true);
    expect(model.provider).toBe("mock");
    expect(model.modelId).toBe("mock-echo");
    expect(new EchoModel({ modelId: "echo-2" }).modelId).toBe("echo-2");
    expect(model.countTokens("abcde")).toBe(2);
  });

  it("echoes the input with the number of messages before it", async () => {
    const parts = await collect(new EchoModel().stream(call([{ role: "user", content: "hello" }])));
    expect(parts).toEqual([
      { type: "text-delta", text: "Echo: hello (history=0)" },
      // "hello" is 2 tokens in; the 23-character answer is 6 tokens out.
      { type: "usage", usage: { inputTokens: 2, outputTokens: 6 } },
      { type: "finish", stopReason: "end_turn", model: "mock-echo" },
    ]);
  });

  it("counts the history before the latest user message", async () => {
    const messages: Message[] = [
      { role: "system", content: "be nice" },
      { role: "user", content: "one" },
      { role: "assistant", content: "Echo: one (history=1)" },
      { role: "user", content: [{ type: "text", text: "two" }] },
    ];
    const parts = await collect(new EchoModel().stream(call(messages)));
    expect(parts[0]).toEqual({ type: "text-delta", text: "Echo: two (history=3)" });
  });

  it("echoes an empty input when there is no user message", async () => {
    const parts = await collect(new EchoModel().stream(call([{ role: "system", content: "s" }])));
    expect(parts[0]).toEqual({ type: "text-delta", text: "Echo:  (history=0)" });
  });

  it("calls an offered tool for `/tool <id> <query>`", async () => {
    const model = new EchoModel();
    const parts = await collect(
      model.stream(call([{ role: "user", content: "  /tool search  weather in Oslo " }], [searchTool])),
    );
    expect(parts).toEqual([
      { type: "tool-call", id: "call_1", name: "search", arguments: { query: "weather in Oslo" } },
      { type: "usage", usage: { inputTokens: 8, outputTokens: 8 } },
      { type: "finish", stopReason: "tool_use", model: "mock-echo" },
    ]);
  });

  it("numbers tool call ids by the assistant turns before them and allows an empty query", async () => {
    const model = new EchoModel();
    const history: Message[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "Echo: hi (history=0)" },
    ];
    const parts = await collect(
      model.stream(call([...history, { role: "user", content: "/tool search" }], [searchTool])),
    );
    expect(parts[0]).toEqual({ type: "tool-call", id: "call_2", name: "search", arguments: { query: "" } });
  });

  it("echoes `/tool` when that tool is not offered", async () => {
    const model = new EchoModel();
    const input = "/tool add 2 40";
    expect((await collect(model.stream(call([{ role: "user", content: input }], [searchTool]))))[0]).toEqual({
      type: "text-delta",
      text: "Echo: /tool add 2 40 (history=0)",
    });
    expect((await collect(model.stream(call([{ role: "user", content: input }]))))[0]).toEqual({
      type: "text-delta",
      text: "Echo: /tool add 2 40 (history=0)",
    });
  });

  it("reports a tool's result after a tool message", async () => {
    const messages: Message[] = [
      { role: "user", content: "/tool search cats" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call_1", name: "search", arguments: { query: "cats" } }],
      },
      { role: "tool", toolCallId: "call_1", toolName: "search", content: "3 results" },
    ];
    const parts = await collect(new EchoModel().stream(call(messages, [searchTool])));
    expect(parts[0]).toEqual({ type: "text-delta", text: "Tool search returned: 3 results" });
    expect(parts[2]).toEqual({ type: "finish", stopReason: "end_turn", model: "mock-echo" });
  });
});
