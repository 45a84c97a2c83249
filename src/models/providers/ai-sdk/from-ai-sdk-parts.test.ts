import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import {
  MockLanguageModelV2,
  streamParts,
  v2Stream,
  v2Usage,
  v3Stream,
  v3Usage,
} from "../../../../test/support/ai-sdk-mocks.js";
import type { LanguageModel, ModelStreamPart } from "../../../contracts/language-model.js";
import { ConfigError } from "../../../errors/error-classes.js";
import { CancelScope } from "../../../loop/cancel-scope.js";
import { readModelStream } from "../../../loop/read-model-stream.js";
import { type AiSdkLanguageModel, fromAiSdk } from "./ai-sdk-model.js";
import { toKeelUsage, toStopReason } from "./from-ai-sdk-parts.js";

const v3Finish = (unified: "stop" | "tool-calls" | "length", usage = v3Usage({ total: 10 }, { total: 5 })) =>
  ({ type: "finish", finishReason: { unified, raw: unified }, usage }) as const;

async function response(model: LanguageModel) {
  const sink = { text: [] as string[], reasoning: [] as string[] };
  const result = await readModelStream(
    model.stream({ messages: [{ role: "user", content: "go" }], options: {} }),
    { onTextDelta: (text) => sink.text.push(text), onReasoningDelta: (text) => sink.reasoning.push(text) },
    { scope: new CancelScope(), fallbackModel: "fallback" },
  );
  return { result, sink };
}

describe("AI SDK stream parts → Keel parts", () => {
  it("v3: text, reasoning with its signature, buffered tool input, the tool call, usage and finish", async () => {
    const mock = new MockLanguageModelV3({
      modelId: "claude-sonnet-4-6",
      doStream: v3Stream([
        { type: "stream-start", warnings: [{ type: "unsupported", feature: "topK" }] },
        { type: "response-metadata", id: "msg_1", modelId: "claude-sonnet-4-6-20260101" },
        { type: "reasoning-start", id: "r0" },
        { type: "reasoning-delta", id: "r0", delta: "Sum " },
        { type: "reasoning-delta", id: "r0", delta: "needed." },
        {
          type: "reasoning-delta",
          id: "r0",
          delta: "",
          providerMetadata: { anthropic: { signature: "sig" } },
        },
        { type: "reasoning-end", id: "r0" },
        { type: "reasoning-start", id: "r1", providerMetadata: { anthropic: { redactedData: "opaque" } } },
        { type: "reasoning-end", id: "r1" },
        { type: "text-start", id: "t0" },
        { type: "text-delta", id: "t0", delta: "Adding " },
        { type: "text-delta", id: "t0", delta: "" },
        { type: "text-delta", id: "t0", delta: "now." },
        { type: "text-end", id: "t0" },
        { type: "tool-input-start", id: "call_1", toolName: "add" },
        { type: "tool-input-delta", id: "call_1", delta: '{"a":2,' },
        { type: "tool-input-delta", id: "call_1", delta: '"b":40}' },
        { type: "tool-input-end", id: "call_1" },
        { type: "tool-call", toolCallId: "call_1", toolName: "add", input: '{"a":2,"b":40}' },
        { type: "raw", rawValue: { anything: true } },
        v3Finish(
          "tool-calls",
          v3Usage(
            { total: 120, noCache: 20, cacheRead: 90, cacheWrite: 10 },
            { total: 30, text: 12, reasoning: 18 },
          ),
        ),
      ]),
    });
    const model = fromAiSdk(mock);
    expect(model).toMatchObject({
      specificationVersion: "keel.model.v1",
      provider: "mock-provider",
      modelId: "claude-sonnet-4-6",
    });
    expect(await streamParts(model)).toEqual([
      { type: "reasoning-delta", text: "Sum " },
      { type: "reasoning-delta", text: "needed." },
      { type: "reasoning", reasoning: { type: "reasoning", text: "Sum needed.", signature: "sig" } },
      { type: "reasoning", reasoning: { type: "reasoning", text: "", redactedData: "opaque" } },
      { type: "text-delta", text: "Adding " },
      { type: "text-delta", text: "now." },
      { type: "tool-call", id: "call_1", name: "add", arguments: '{"a":2,"b":40}' },
      {
        type: "usage",
        usage: {
          inputTokens: 120,
          outputTokens: 30,
          totalTokens: 150,
          cacheReadTokens: 90,
          cacheCreationTokens: 10,
          reasoningTokens: 18,
        },
      },
      { type: "finish", stopReason: "tool_use", model: "claude-sonnet-4-6-20260101", responseId: "msg_1" },
    ] satisfies ModelStreamPart[]);
  });

  it("v2: the same parts from a v2 stream, with v2's flat usage", async () => {
    const mock = new MockLanguageModelV2({
      modelId: "gpt-4o-mini",
      doStream: [
        v2Stream([
          { type: "stream-start", warnings: [] },
          { type: "response-metadata", id: "chatcmpl-1", modelId: "gpt-4o-mini-2024-07-18" },
          { type: "reasoning-start", id: "r" },
          { type: "reasoning-delta", id: "r", delta: "think" },
          { type: "reasoning-end", id: "r" },
          { type: "text-delta", id: "t", delta: "Hello" },
          { type: "tool-input-start", id: "c1", toolName: "add" },
          { type: "tool-input-delta", id: "c1", delta: '{"a":1,"b":2}' },
          { type: "tool-input-end", id: "c1" },
          { type: "tool-call", toolCallId: "c1", toolName: "add", input: '{"a":1,"b":2}' },
          { type: "tool-call", toolCallId: "c2", toolName: "add", input: '{"a":3,"b":4}' },
          {
            type: "finish",
            finishReason: "tool-calls",
            usage: v2Usage({
              inputTokens: 100,
              outputTokens: 40,
              totalTokens: 140,
              cachedInputTokens: 64,
              reasoningTokens: 25,
            }),
          },
        ]),
      ],
    });
    expect(await streamParts(fromAiSdk(mock))).toEqual([
      { type: "reasoning-delta", text: "think" },
      { type: "reasoning", reasoning: { type: "reasoning", text: "think" } },
      { type: "text-delta", text: "Hello" },
      { type: "tool-call", id: "c1", name: "add", arguments: '{"a":1,"b":2}' },
      { type: "tool-call", id: "c2", name: "add", arguments: '{"a":3,"b":4}' },
      {
        type: "usage",
        usage: {
          inputTokens: 100,
          outputTokens: 40,
          totalTokens: 140,
          cacheReadTokens: 64,
          reasoningTokens: 25,
        },
      },
      { type: "finish", stopReason: "tool_use", model: "gpt-4o-mini-2024-07-18", responseId: "chatcmpl-1" },
    ] satisfies ModelStreamPart[]);
  });

  it("the loop reads the result: arguments parsed, malformed ones kept as the call's argumentsError", async () => {
    const mock = new MockLanguageModelV3({
      doStream: v3Stream([
        { type: "text-delta", id: "t", delta: "Two calls." },
        { type: "tool-call", toolCallId: "ok", toolName: "add", input: '{"a":2,"b":40}' },
        { type: "tool-call", toolCallId: "bad", toolName: "add", input: '{"a":2,' },
        { type: "tool-call", toolCallId: "list", toolName: "add", input: "[1,2]" },
        { type: "tool-call", toolCallId: "empty", toolName: "ping", input: "" },
        v3Finish("tool-calls"),
      ]),
    });
    const { result, sink } = await response(fromAiSdk(mock));
    expect(sink.text).toEqual(["Two calls."]);
    expect(result.stopReason).toBe("tool_use");
    expect(result.model).toBe("fallback"); // no response-metadata: the loop falls back to the model id
    expect(result.usage).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    expect(result.toolCalls).toEqual([
      { id: "ok", name: "add", arguments: { a: 2, b: 40 }, rawArguments: '{"a":2,"b":40}' },
      {
        id: "bad",
        name: "add",
        arguments: {},
        rawArguments: '{"a":2,',
        argumentsError: expect.stringMatching(/^the arguments are not valid JSON/),
      },
      {
        id: "list",
        name: "add",
        arguments: {},
        rawArguments: "[1,2]",
        argumentsError: "the arguments are not a JSON object",
      },
      { id: "empty", name: "ping", arguments: {}, rawArguments: "" },
    ]);
  });

  it("skips tool calls and results the provider executed itself", async () => {
    const mock = new MockLanguageModelV3({
      doStream: v3Stream([
        { type: "tool-input-start", id: "ws", toolName: "web_search", providerExecuted: true },
        { type: "tool-input-delta", id: "ws", delta: '{"q":"keel"}' },
        { type: "tool-input-end", id: "ws" },
        {
          type: "tool-call",
          toolCallId: "ws",
          toolName: "web_search",
          input: '{"q":"keel"}',
          providerExecuted: true,
        },
        { type: "tool-result", toolCallId: "ws", toolName: "web_search", result: { hits: 3 } },
        { type: "text-delta", id: "t", delta: "Found 3." },
        v3Finish("stop"),
      ]),
    });
    const parts = await streamParts(fromAiSdk(mock));
    expect(parts.filter((part) => part.type === "tool-call")).toEqual([]);
    expect(parts.map((part) => part.type)).toEqual(["text-delta", "usage", "finish"]);
  });

  it("a tool input cut off before its tool-call becomes a call the loop reports as malformed", async () => {
    const mock = new MockLanguageModelV3({
      doStream: v3Stream([
        { type: "reasoning-delta", id: "r", delta: "hmm" },
        { type: "tool-input-start", id: "c1", toolName: "add" },
        { type: "tool-input-delta", id: "c1", delta: '{"a":2,"b"' },
        { type: "tool-input-start", id: "c2", toolName: "note", inputEncoding: "text" },
        { type: "tool-input-delta", id: "c2", delta: "raw text" },
      ]),
    });
    const parts = await streamParts(fromAiSdk(mock));
    expect(parts).toEqual([
      { type: "reasoning-delta", text: "hmm" },
      { type: "reasoning", reasoning: { type: "reasoning", text: "hmm" } },
      { type: "tool-call", id: "c1", name: "add", arguments: '{"a":2,"b"' },
      { type: "tool-call", id: "c2", name: "note", arguments: '"raw text"' },
    ]);
    const again = new MockLanguageModelV3({
      doStream: v3Stream([
        { type: "tool-input-start", id: "c1", toolName: "add" },
        { type: "tool-input-delta", id: "c1", delta: '{"a":2' },
        v3Finish("length"),
      ]),
    });
    const { result } = await response(fromAiSdk(again));
    expect(result.stopReason).toBe("max_tokens");
    expect(result.toolCalls).toEqual([
      expect.objectContaining({ id: "c1", name: "add", arguments: {}, argumentsError: expect.any(String) }),
    ]);
  });

  it("stops at an error part and cancels the rest of the stream", async () => {
    let cancelled = false;
    const parts: LanguageModelV3StreamPart[] = [
      { type: "text-delta", id: "t", delta: "partial" },
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      { type: "text-delta", id: "t", delta: "never read" },
      v3Finish("stop"),
    ];
    let index = 0;
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      pull(controller) {
        const next = parts[index++];
        if (next === undefined) controller.close();
        else controller.enqueue(next);
      },
      cancel() {
        cancelled = true;
      },
    });
    const mock = new MockLanguageModelV3({ provider: "anthropic.messages", doStream: { stream } });
    const seen = await streamParts(fromAiSdk(mock));
    expect(seen.map((part) => part.type)).toEqual(["text-delta", "error"]);
    expect(seen[1]).toMatchObject({ type: "error", errorType: "rate_limit" });
    expect(cancelled).toBe(true);
  });

  it("a consumer that leaves early cancels the AI SDK stream", async () => {
    let cancelled = false;
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      pull(controller) {
        controller.enqueue({ type: "text-delta", id: "t", delta: "more " });
      },
      cancel() {
        cancelled = true;
      },
    });
    const model = fromAiSdk(new MockLanguageModelV3({ doStream: { stream } }));
    let count = 0;
    for await (const _part of model.stream({ messages: [], options: {} })) if (++count === 3) break;
    expect(count).toBe(3);
    expect(cancelled).toBe(true);
  });

  it("an abort the caller asked for is thrown as is, not turned into a model error", async () => {
    const controller = new AbortController();
    const mock = new MockLanguageModelV3({
      doStream: async (options) => {
        controller.abort();
        throw options.abortSignal?.reason ?? new Error("aborted");
      },
    });
    await expect(streamParts(fromAiSdk(mock), { signal: controller.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
  });
});

describe("doGenerate mode", () => {
  it("v3: replays the result's content as parts", async () => {
    const mock = new MockLanguageModelV3({
      doGenerate: {
        content: [
          { type: "reasoning", text: "plan", providerMetadata: { anthropic: { signature: "s1" } } },
          { type: "text", text: "Calling add." },
          { type: "tool-call", toolCallId: "c1", toolName: "add", input: '{"a":1,"b":1}' },
          { type: "tool-call", toolCallId: "c2", toolName: "search", input: "{}", providerExecuted: true },
          { type: "source", sourceType: "url", id: "s", url: "https://example.com" },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_use" },
        usage: v3Usage({ noCache: 7, cacheRead: 3 }, { text: 4, reasoning: 2 }),
        response: { id: "gen_1", modelId: "m-2026" },
        warnings: [],
      },
    });
    expect(await streamParts(fromAiSdk(mock, { mode: "generate" }))).toEqual([
      { type: "reasoning", reasoning: { type: "reasoning", text: "plan", signature: "s1" } },
      { type: "text-delta", text: "Calling add." },
      { type: "tool-call", id: "c1", name: "add", arguments: '{"a":1,"b":1}' },
      {
        type: "usage",
        usage: { inputTokens: 10, outputTokens: 6, totalTokens: 16, cacheReadTokens: 3, reasoningTokens: 2 },
      },
      { type: "finish", stopReason: "tool_use", model: "m-2026", responseId: "gen_1" },
    ]);
    expect(mock.doStreamCalls).toHaveLength(0);
    expect(mock.doGenerateCalls).toHaveLength(1);
  });

  it("v2: the same from a v2 result", async () => {
    const mock = new MockLanguageModelV2({
      doGenerate: [
        {
          content: [{ type: "text", text: "Hi" }],
          finishReason: "stop",
          usage: v2Usage({ inputTokens: 3, outputTokens: 1 }),
          warnings: [],
        },
      ],
    });
    expect(
      await streamParts(fromAiSdk(mock, { mode: "generate", modelId: "renamed", provider: "mine" })),
    ).toEqual([
      { type: "text-delta", text: "Hi" },
      { type: "usage", usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 } },
      { type: "finish", stopReason: "end_turn" },
    ]);
  });
});

describe("usage and stop reasons", () => {
  it("v3 usage: totals win, else the parts are summed; v2 usage: missing counts are zero", () => {
    expect(toKeelUsage(v3Usage({ total: 50, noCache: 1 }, { total: 9, text: 1 }))).toEqual({
      inputTokens: 50,
      outputTokens: 9,
      totalTokens: 59,
    });
    expect(
      toKeelUsage(v3Usage({ noCache: 5, cacheRead: 10, cacheWrite: 20 }, { text: 3, reasoning: 4 })),
    ).toEqual({
      inputTokens: 35,
      outputTokens: 7,
      totalTokens: 42,
      cacheReadTokens: 10,
      cacheCreationTokens: 20,
      reasoningTokens: 4,
    });
    expect(toKeelUsage(v2Usage({}))).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
    expect(toKeelUsage(v2Usage({ inputTokens: 4, outputTokens: 2 }))).toEqual({
      inputTokens: 4,
      outputTokens: 2,
      totalTokens: 6,
    });
  });

  it("maps v2 and v3 finish reasons, a v3 raw stop_sequence included", () => {
    const v2 = ["stop", "length", "tool-calls", "content-filter", "error", "other", "unknown"] as const;
    expect(v2.map(toStopReason)).toEqual([
      "end_turn",
      "max_tokens",
      "tool_use",
      "content_filter",
      "unknown",
      "unknown",
      "unknown",
    ]);
    expect(toStopReason({ unified: "stop", raw: "stop_sequence" })).toBe("stop_sequence");
    expect(toStopReason({ unified: "stop", raw: "end_turn" })).toBe("end_turn");
    expect(toStopReason({ unified: "length", raw: undefined })).toBe("max_tokens");
    expect(toStopReason({ unified: "other", raw: "pause_turn" })).toBe("unknown");
  });
});

describe("fromAiSdk()", () => {
  it("refuses a model of another specification version, with a hint", () => {
    const v4 = { ...new MockLanguageModelV3(), specificationVersion: "v4" } as unknown as AiSdkLanguageModel;
    expect(() => fromAiSdk(v4)).toThrow(ConfigError);
    expect(() => fromAiSdk(v4)).toThrow(/specification v2 or v3; this one is v4/);
    expect(() => fromAiSdk({} as AiSdkLanguageModel)).toThrow(/not an AI SDK language model/);
  });

  it("is a Keel LanguageModel with an approximate token count", () => {
    const model = fromAiSdk(new MockLanguageModelV3({ modelId: "x" }), {
      modelId: "gpt-4o",
      provider: "openai",
    });
    expect(model).toMatchObject({ modelId: "gpt-4o", provider: "openai" });
    expect(model.countTokens?.("12345678")).toBe(2);
  });
});
