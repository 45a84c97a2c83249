import type { LanguageModelV2StreamPart, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { LLMRateLimitError, Runtime } from "../src/index.js";
import { fromAiSdk } from "../src/models/providers/ai-sdk/index.js";
import { MockLanguageModelV2, v2Stream, v2Usage, v3Stream, v3Usage } from "./support/ai-sdk-mocks.js";
import { FakeClock } from "./support/fake-model-server.js";
import { addTool, collect } from "./support/harness.js";

/** Turn 1: the model calls `add` (its input streamed in pieces); turn 2: it answers in three deltas. */
const toolTurn: LanguageModelV3StreamPart[] = [
  { type: "stream-start", warnings: [] },
  { type: "response-metadata", id: "resp_1", modelId: "gpt-4o-mini-2024-07-18" },
  { type: "text-start", id: "t0" },
  { type: "text-delta", id: "t0", delta: "Let me add. " },
  { type: "text-end", id: "t0" },
  { type: "tool-input-start", id: "call_add", toolName: "add" },
  { type: "tool-input-delta", id: "call_add", delta: '{"a": 2, ' },
  { type: "tool-input-delta", id: "call_add", delta: '"b": 40}' },
  { type: "tool-input-end", id: "call_add" },
  { type: "tool-call", toolCallId: "call_add", toolName: "add", input: '{"a": 2, "b": 40}' },
  {
    type: "finish",
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage: v3Usage(
      { total: 1000, noCache: 200, cacheRead: 800, cacheWrite: 0 },
      { total: 30, text: 20, reasoning: 10 },
    ),
  },
];

const answerTurn: LanguageModelV3StreamPart[] = [
  { type: "response-metadata", id: "resp_2", modelId: "gpt-4o-mini-2024-07-18" },
  { type: "text-start", id: "t1" },
  { type: "text-delta", id: "t1", delta: "The answer " },
  { type: "text-delta", id: "t1", delta: "is " },
  { type: "text-delta", id: "t1", delta: "42." },
  { type: "text-end", id: "t1" },
  {
    type: "finish",
    finishReason: { unified: "stop", raw: "stop" },
    usage: v3Usage({ total: 1100, noCache: 300, cacheRead: 800 }, { total: 8, text: 8 }),
  },
];

function mockV3() {
  return new MockLanguageModelV3({
    provider: "openai.chat",
    modelId: "gpt-4o-mini",
    doStream: [v3Stream(toolTurn), v3Stream(answerTurn, 1)],
  });
}

async function runtimeOn(llm: ReturnType<typeof fromAiSdk>) {
  return Runtime.fromDict({
    agents: [
      {
        id: "math",
        name: "Math",
        instructions: "You add numbers with the add tool.",
        tools: [addTool],
        llm,
      },
    ],
  });
}

describe("an agent on an AI SDK model (ai/test MockLanguageModelV3)", () => {
  it("runs the ReAct loop: a tool call, its result in the second prompt, the final answer and the usage", async () => {
    const mock = mockV3();
    const runtime = await runtimeOn(fromAiSdk(mock, { temperature: 0, maxOutputTokens: 256 }));
    const result = await runtime.runDetailed({
      agentId: "math",
      sessionId: "s1",
      inputText: "What is 2 + 40?",
    });

    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe("The answer is 42.");
    expect(mock.doStreamCalls).toHaveLength(2);

    // First call: the system prompt and the question, the tool offered as a function tool, the settings.
    const first = mock.doStreamCalls[0]!;
    expect(first.prompt).toEqual([
      { role: "system", content: "You add numbers with the add tool." },
      { role: "user", content: [{ type: "text", text: "What is 2 + 40?" }] },
    ]);
    expect(first.tools).toEqual([
      {
        type: "function",
        name: "add",
        description: "Add two numbers",
        inputSchema: expect.objectContaining({ type: "object", required: ["a", "b"] }),
      },
    ]);
    expect(first).toMatchObject({ temperature: 0, maxOutputTokens: 256 });
    expect(first.abortSignal).toBeInstanceOf(AbortSignal);

    // Second call: the same start, then the assistant's tool call and the tool's result.
    const second = mock.doStreamCalls[1]!;
    expect(second.prompt.slice(0, first.prompt.length)).toEqual(first.prompt);
    expect(second.prompt.slice(first.prompt.length)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me add. " },
          { type: "tool-call", toolCallId: "call_add", toolName: "add", input: { a: 2, b: 40 } },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_add",
            toolName: "add",
            output: { type: "text", value: "42" },
          },
        ],
      },
    ]);

    // Usage of both calls, cached and reasoning tokens included, priced as gpt-4o-mini.
    expect(result.usage).toMatchObject({
      llmCalls: 2,
      toolCalls: 1,
      inputTokens: 2100,
      outputTokens: 38,
      totalTokens: 2138,
      inputTokensCached: 1600,
      inputTokensCacheCreation: 0,
      reasoningTokens: 10,
    });
    const expectedCost = (500 * 0.15 + 1600 * 0.075 + 38 * 0.6) / 1_000_000;
    expect(result.usage.costUsd).toBeCloseTo(expectedCost, 12);
    await runtime.close();
  });

  it("streams llm.delta events as the AI SDK stream yields text, and llm.finished with the model's answer", async () => {
    const runtime = await runtimeOn(fromAiSdk(mockV3()));
    const chunks = await collect(runtime.stream({ agentId: "math", inputText: "What is 2 + 40?" }));
    expect(chunks.filter((chunk) => chunk.kind === "llm.delta").map((chunk) => chunk.payload.text)).toEqual([
      "Let me add. ",
      "The answer ",
      "is ",
      "42.",
    ]);
    const finished = chunks.filter((chunk) => chunk.kind === "llm.finished").map((chunk) => chunk.payload);
    expect(finished).toEqual([
      expect.objectContaining({ model: "gpt-4o-mini-2024-07-18", stopReason: "tool_use" }),
      expect.objectContaining({ model: "gpt-4o-mini-2024-07-18", stopReason: "end_turn" }),
    ]);
    const tool = chunks.find((chunk) => chunk.kind === "tool.finished");
    expect(tool?.payload).toMatchObject({ toolId: "add" });
    expect(chunks.at(-1)!.result).toMatchObject({
      finalOutput: "The answer is 42.",
      stopReason: "completed",
    });
    await runtime.close();
  });

  it("a malformed tool input reaches the model as a tool error, and the run goes on", async () => {
    const mock = new MockLanguageModelV3({
      doStream: [
        v3Stream([
          { type: "tool-call", toolCallId: "c1", toolName: "add", input: '{"a": 2, "b": ' },
          { type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage: v3Usage({}, {}) },
        ]),
        v3Stream(answerTurn),
      ],
    });
    const runtime = await runtimeOn(fromAiSdk(mock));
    const result = await runtime.runDetailed({ agentId: "math", inputText: "2 + 40?" });
    expect(result.finalOutput).toBe("The answer is 42.");
    const toolMessage = mock.doStreamCalls[1]!.prompt.at(-1)!;
    expect(toolMessage).toMatchObject({
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "c1", output: { type: "error-text" } }],
    });
    await runtime.close();
  });

  it("a 503 before the first part is retried after the backoff and the run goes on", async () => {
    const { APICallError } = await import("@ai-sdk/provider");
    const answers = [
      () => {
        throw new APICallError({ message: "busy", url: "u", requestBodyValues: {}, statusCode: 503 });
      },
      async () => v3Stream(answerTurn),
    ];
    let calls = 0;
    const mock = new MockLanguageModelV3({ doStream: async () => answers[calls++]!() });
    const clock = new FakeClock();
    const runtime = await runtimeOn(fromAiSdk(mock, { clock }));
    const result = await runtime.runDetailed({ agentId: "math", inputText: "2 + 40?" });
    expect(result).toMatchObject({ stopReason: "completed", finalOutput: "The answer is 42." });
    expect(clock.sleeps).toEqual([500]);
  });

  it("a 429 is retried with Retry-After as the floor, then ends the run failed with LLMRateLimitError", async () => {
    const { APICallError } = await import("@ai-sdk/provider");
    let calls = 0;
    const mock = new MockLanguageModelV3({
      doStream: async () => {
        calls++;
        throw new APICallError({
          message: "Rate limit reached",
          url: "https://api.openai.com/v1/chat/completions",
          requestBodyValues: {},
          statusCode: 429,
          responseHeaders: { "retry-after": "7" },
        });
      },
    });
    const clock = new FakeClock();
    const runtime = await runtimeOn(fromAiSdk(mock, { clock, retry: { max_attempts: 3 } }));
    const result = await runtime.runDetailed({ agentId: "math", inputText: "2 + 40?" });
    expect(calls).toBe(3);
    expect(clock.sleeps).toEqual([7000, 7000]);
    expect(result.stopReason).toBe("failed");
    expect(result.exception).toBeInstanceOf(LLMRateLimitError);
    expect(result.exception?.context.attempts).toBe(3);
    expect((result.exception as LLMRateLimitError).retryAfterMs).toBe(7000);
    expect(result.errorDetails).toMatchObject({ code: "llm.rate_limit", retryable: true });
    await runtime.close();
  });
});

describe("structured output", () => {
  it("a run's output type reaches the AI SDK model as a JSON response format, and the JSON answer is parsed", async () => {
    const { z } = await import("zod");
    const mock = new MockLanguageModelV3({
      doStream: [
        v3Stream([
          { type: "text-delta", id: "t", delta: '{"sum": 42, ' },
          { type: "text-delta", id: "t", delta: '"explanation": "2 + 40"}' },
          {
            type: "finish",
            finishReason: { unified: "stop", raw: "stop" },
            usage: v3Usage({ total: 5 }, { total: 9 }),
          },
        ]),
      ],
    });
    const runtime = await runtimeOn(fromAiSdk(mock));
    const answer = await runtime.run({
      agentId: "math",
      inputText: "What is 2 + 40?",
      outputType: z.object({ sum: z.number(), explanation: z.string() }),
    });
    expect(answer).toEqual({ sum: 42, explanation: "2 + 40" });
    expect(mock.doStreamCalls[0]!.responseFormat).toEqual({
      type: "json",
      name: expect.any(String),
      schema: expect.objectContaining({ type: "object", required: ["sum", "explanation"] }),
    });
    await runtime.close();
  });
});

describe("an agent on a specification-v2 model", () => {
  it("runs the same loop", async () => {
    const v2Turns: LanguageModelV2StreamPart[][] = [
      [
        { type: "tool-input-start", id: "c1", toolName: "add" },
        { type: "tool-input-delta", id: "c1", delta: '{"a":2,"b":40}' },
        { type: "tool-input-end", id: "c1" },
        { type: "tool-call", toolCallId: "c1", toolName: "add", input: '{"a":2,"b":40}' },
        {
          type: "finish",
          finishReason: "tool-calls",
          usage: v2Usage({ inputTokens: 50, outputTokens: 10, totalTokens: 60, cachedInputTokens: 20 }),
        },
      ],
      [
        { type: "text-delta", id: "t", delta: "42" },
        {
          type: "finish",
          finishReason: "stop",
          usage: v2Usage({ inputTokens: 70, outputTokens: 2, totalTokens: 72 }),
        },
      ],
    ];
    const mock = new MockLanguageModelV2({ modelId: "some-v2-model", doStream: v2Turns.map(v2Stream) });
    const runtime = await runtimeOn(fromAiSdk(mock));
    const result = await runtime.runDetailed({ agentId: "math", inputText: "2 + 40?" });
    expect(result.finalOutput).toBe("42");
    expect(mock.doStreamCalls[1]!.prompt.at(-1)).toEqual({
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c1", toolName: "add", output: { type: "text", value: "42" } },
      ],
    });
    expect(result.usage).toMatchObject({
      llmCalls: 2,
      inputTokens: 120,
      outputTokens: 12,
      inputTokensCached: 20,
    });
    expect(result.usage.costUsd).toBeNull(); // no price is known for "some-v2-model"
    await runtime.close();
  });
});

describe("the adapter's dependencies", () => {
  it("loads nothing of the AI SDK at run time: @ai-sdk/provider only as types, ai never", async () => {
    const { readdir, readFile } = await import("node:fs/promises");
    const dir = new URL("../src/models/providers/ai-sdk/", import.meta.url);
    const sources = (await readdir(dir)).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));
    expect(sources.length).toBeGreaterThan(0);
    for (const name of sources) {
      const text = await readFile(new URL(name, dir), "utf8");
      const imports = [
        ...text.matchAll(/^(import|export)[^;]*?from\s+"(@ai-sdk\/[^"]+|ai(?:\/[^"]*)?)";/gms),
      ];
      for (const [statement] of imports) expect(statement, name).toMatch(/^(import|export) type /);
      expect(text, name).not.toMatch(/import\(\s*"(@ai-sdk|ai)/);
    }
  });
});
