import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
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
import type { ModelRequest } from "../../../contracts/language-model.js";
import type { Message } from "../../../contracts/message.js";
import { fromAiSdk } from "./ai-sdk-model.js";
import {
  mergeSettings,
  settingsFromOptions,
  toAiSdkCallOptions,
  toAiSdkPrompt,
  toFunctionTool,
} from "./to-ai-sdk-call.js";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const transcript: Message[] = [
  {
    role: "user",
    content: [
      { type: "text", text: "What is in this picture, and add 2 and 40?" },
      { type: "image", data: PNG },
      { type: "image", data: "https://example.com/cat.jpg", mediaType: "image/jpeg" },
    ],
  },
  {
    role: "assistant",
    content: "Let me add them.",
    reasoning: [
      { type: "reasoning", text: "The user wants a sum.", signature: "sig-1" },
      { type: "reasoning", text: "", redactedData: "opaque" },
    ],
    toolCalls: [
      { id: "call_1", name: "add", arguments: { a: 2, b: 40 } },
      { id: "call_2", name: "lookup", arguments: {}, rawArguments: "{oops", argumentsError: "not JSON" },
    ],
  },
  { role: "tool", toolCallId: "call_1", toolName: "add", content: "42" },
  { role: "tool", toolCallId: "call_2", toolName: "lookup", content: "bad arguments", isError: true },
  { role: "assistant", content: "It is a cat; 2 + 40 = 42." },
  { role: "user", content: "Thanks" },
];

describe("Keel transcript → AI SDK prompt", () => {
  it("maps system, user text and images, assistant reasoning / text / tool calls and grouped tool results", () => {
    expect(toAiSdkPrompt("Be brief.", transcript)).toEqual([
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this picture, and add 2 and 40?" },
          { type: "file", data: PNG, mediaType: "image/png" },
          { type: "file", data: new URL("https://example.com/cat.jpg"), mediaType: "image/jpeg" },
        ],
      },
      {
        role: "assistant",
        content: [
          {
            type: "reasoning",
            text: "The user wants a sum.",
            providerOptions: { anthropic: { signature: "sig-1" } },
          },
          { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "opaque" } } },
          { type: "text", text: "Let me add them." },
          { type: "tool-call", toolCallId: "call_1", toolName: "add", input: { a: 2, b: 40 } },
          { type: "tool-call", toolCallId: "call_2", toolName: "lookup", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "add",
            output: { type: "text", value: "42" },
          },
          {
            type: "tool-result",
            toolCallId: "call_2",
            toolName: "lookup",
            output: { type: "error-text", value: "bad arguments" },
          },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "It is a cat; 2 + 40 = 42." }] },
      { role: "user", content: [{ type: "text", text: "Thanks" }] },
    ]);
  });

  it("splits system blocks so each keeps its cache control; an assistant turn with only tool calls has no text", () => {
    const prompt = toAiSdkPrompt(
      [
        { type: "text", text: "You are Keel.", cacheControl: { type: "ephemeral" } },
        { type: "text", text: "Today is Monday." },
      ],
      [
        { role: "system", content: "A later system note." },
        {
          role: "user",
          content: [{ type: "text", text: "long document", cacheControl: { type: "ephemeral" } }],
        },
        { role: "assistant", content: "", toolCalls: [{ id: "c", name: "t", arguments: {} }] },
        { role: "tool", toolCallId: "c", toolName: "t", content: "ok" },
        { role: "user", content: "next" },
        { role: "tool", toolCallId: "d", toolName: "t", content: "late" },
      ],
    );
    expect(prompt).toEqual([
      {
        role: "system",
        content: "You are Keel.",
        providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
      },
      { role: "system", content: "Today is Monday." },
      { role: "system", content: "A later system note." },
      {
        role: "user",
        content: [
          {
            type: "text",
            text: "long document",
            providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
          },
        ],
      },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c", toolName: "t", input: {} }] },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c", toolName: "t", output: { type: "text", value: "ok" } },
        ],
      },
      { role: "user", content: [{ type: "text", text: "next" }] },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "d", toolName: "t", output: { type: "text", value: "late" } },
        ],
      },
    ]);
  });

  it("sniffs the media type of base64 images, and leaves an unknown one as image/*", () => {
    const types = ["/9j/4AAQ", "R0lGODlh", "UklGRiQ", "AAAA"].map((data) => {
      const [message] = toAiSdkPrompt(undefined, [{ role: "user", content: [{ type: "image", data }] }]);
      return (message!.content as { mediaType: string }[])[0]!.mediaType;
    });
    expect(types).toEqual(["image/jpeg", "image/gif", "image/webp", "image/*"]);
  });

  it("leaves out an empty system prompt", () => {
    expect(toAiSdkPrompt("", [{ role: "user", content: "x" }])).toEqual([
      { role: "user", content: [{ type: "text", text: "x" }] },
    ]);
  });
});

describe("tools, tool choice, output schema and settings", () => {
  it("tools become function tools with their JSON schema; Keel's flat cache_control goes to anthropic", () => {
    const schema = { type: "object", properties: { a: { type: "number" } }, required: ["a"] };
    expect(toFunctionTool({ name: "add", description: "Add", inputSchema: schema })).toEqual({
      type: "function",
      name: "add",
      description: "Add",
      inputSchema: schema,
    });
    expect(
      toFunctionTool({
        name: "add",
        description: "Add",
        inputSchema: schema,
        providerOptions: { cache_control: { type: "ephemeral" }, openai: { strict: true }, ignored: 3 },
      }).providerOptions,
    ).toEqual({ anthropic: { cacheControl: { type: "ephemeral" } }, openai: { strict: true } });
  });

  it("reads settings from Keel option names in either spelling", () => {
    expect(
      settingsFromOptions({
        temperature: 0.2,
        maxTokens: 300,
        top_p: 0.9,
        topK: 40,
        seed: 7,
        presence_penalty: 0.1,
        frequencyPenalty: 0.3,
        stop: "END",
        parallel_tool_calls: false,
        providerOptions: { openai: { parallelToolCalls: false } },
        extraHeaders: { "x-trace": "1" },
      }),
    ).toEqual({
      temperature: 0.2,
      maxOutputTokens: 300,
      topP: 0.9,
      topK: 40,
      seed: 7,
      presencePenalty: 0.1,
      frequencyPenalty: 0.3,
      stopSequences: ["END"],
      providerOptions: { openai: { parallelToolCalls: false } },
      headers: { "x-trace": "1" },
    });
    expect(settingsFromOptions({ max_tokens: 10, stop_sequences: ["a", "b"] })).toEqual({
      maxOutputTokens: 10,
      stopSequences: ["a", "b"],
    });
  });

  it("merges settings field by field, provider options per provider and headers per name", () => {
    expect(
      mergeSettings(
        { temperature: 1, providerOptions: { openai: { user: "u", store: false } }, headers: { a: "1" } },
        { temperature: 0, providerOptions: { openai: { store: true }, anthropic: { sendReasoning: true } } },
        { headers: { b: "2" }, topP: undefined },
      ),
    ).toEqual({
      temperature: 0,
      providerOptions: { openai: { user: "u", store: true }, anthropic: { sendReasoning: true } },
      headers: { a: "1", b: "2" },
    });
  });

  it("builds the whole call: request options over the adapter's defaults, clientKwargs last, the signal", () => {
    const controller = new AbortController();
    const request: ModelRequest = {
      system: "sys",
      messages: [{ role: "user", content: "hi" }],
      tools: [{ name: "add", description: "Add", inputSchema: { type: "object" } }],
      toolChoice: { type: "tool", name: "add" },
      outputSchema: { name: "answer", schema: { type: "object", properties: { n: { type: "number" } } } },
      options: { temperature: 0.5, maxTokens: 64 },
      clientKwargs: {
        providerOptions: { openai: { user: "alice" } },
        extra_headers: { "x-request": "r1", n: 1 },
      },
      signal: controller.signal,
    };
    const call = toAiSdkCallOptions(request, {
      temperature: 1,
      seed: 3,
      providerOptions: { openai: { store: false } },
      headers: { "x-app": "keel" },
    });
    expect(call).toEqual({
      prompt: [
        { role: "system", content: "sys" },
        { role: "user", content: [{ type: "text", text: "hi" }] },
      ],
      temperature: 0.5,
      maxOutputTokens: 64,
      seed: 3,
      providerOptions: { openai: { store: false, user: "alice" } },
      headers: { "x-app": "keel", "x-request": "r1" },
      tools: [{ type: "function", name: "add", description: "Add", inputSchema: { type: "object" } }],
      toolChoice: { type: "tool", toolName: "add" },
      responseFormat: {
        type: "json",
        name: "answer",
        schema: { type: "object", properties: { n: { type: "number" } } },
      },
      abortSignal: controller.signal,
    } satisfies LanguageModelV3CallOptions);
    for (const choice of ["auto", "none", "required"] as const) {
      expect(toAiSdkCallOptions({ ...request, toolChoice: choice }, {}).toolChoice).toEqual({ type: choice });
    }
    expect(toAiSdkCallOptions({ messages: [], options: {}, tools: [] }, {})).toEqual({ prompt: [] });
  });
});

describe("what an AI SDK model receives", () => {
  const finish = { type: "finish", finishReason: { unified: "stop", raw: "stop" } } as const;

  it("v3: MockLanguageModelV3 gets the prompt, tools, settings and signal", async () => {
    const mock = new MockLanguageModelV3({
      doStream: v3Stream([
        { type: "text-delta", id: "t", delta: "ok" },
        { ...finish, usage: v3Usage({}, {}) },
      ]),
    });
    const controller = new AbortController();
    await streamParts(fromAiSdk(mock, { temperature: 0, maxOutputTokens: 100 }), {
      system: "Be brief.",
      messages: transcript.slice(0, 4),
      tools: [{ name: "add", description: "Add", inputSchema: { type: "object" } }],
      toolChoice: "auto",
      signal: controller.signal,
    });
    expect(mock.doStreamCalls).toHaveLength(1);
    const call = mock.doStreamCalls[0]!;
    expect(call.prompt).toEqual(toAiSdkPrompt("Be brief.", transcript.slice(0, 4)));
    expect(call).toMatchObject({
      temperature: 0,
      maxOutputTokens: 100,
      tools: [{ type: "function", name: "add" }],
      toolChoice: { type: "auto" },
    });
    expect(call.abortSignal).toBe(controller.signal);
  });

  it("v2: a v2 model gets the same call", async () => {
    const mock = new MockLanguageModelV2({
      doStream: [
        v2Stream([
          { type: "text-delta", id: "t", delta: "ok" },
          { type: "finish", finishReason: "stop", usage: v2Usage({}) },
        ]),
      ],
    });
    await streamParts(fromAiSdk(mock, { topP: 0.5 }), {
      messages: transcript.slice(0, 4),
      outputSchema: { name: "out", schema: { type: "object" } },
    });
    expect(mock.doStreamCalls[0]).toEqual({
      prompt: toAiSdkPrompt(undefined, transcript.slice(0, 4)),
      topP: 0.5,
      responseFormat: { type: "json", name: "out", schema: { type: "object" } },
    });
  });
});
