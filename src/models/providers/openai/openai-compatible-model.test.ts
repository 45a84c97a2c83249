import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  FakeClock,
  FakeModelServer,
  jsonReply,
  silentReply,
  streamReply,
} from "../../../../test/support/fake-model-server.js";
import { openAIIssues } from "../../../../test/support/openai-openapi.js";
import {
  isLanguageModel,
  type ModelRequest,
  type ModelStreamPart,
} from "../../../contracts/language-model.js";
import {
  ConfigError,
  LLMConnectionError,
  LLMRateLimitError,
  LLMResponseError,
} from "../../../errors/error-classes.js";
import type { KeelError } from "../../../errors/keel-error.js";
import { computeCost, resolvePricing } from "../../pricing.js";
import { OpenAICompatibleModel, type OpenAICompatibleModelOptions } from "./openai-compatible-model.js";

const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8");
const jsonFixture = (name: string) => JSON.parse(fixture(name)) as Record<string, unknown>;

let server: FakeModelServer;
let clock: FakeClock;

beforeEach(async () => {
  server = await FakeModelServer.start();
  clock = new FakeClock();
});

afterEach(async () => {
  await server.close();
});

function model(options: Partial<OpenAICompatibleModelOptions> = {}): OpenAICompatibleModel {
  return new OpenAICompatibleModel({
    apiBase: `${server.url}/v1`,
    apiKey: "sk-test",
    keyVariable: "OPENAI_API_KEY",
    modelId: "gpt-4o",
    clock,
    ...options,
  });
}

async function collect(parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const collected: ModelStreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

function bodyOf(index: number): Record<string, unknown> {
  const request = server.requests.at(index);
  if (!request) throw new Error(`no request ${index}`);
  return request.body as Record<string, unknown>;
}

function errorOf(parts: ModelStreamPart[]): KeelError {
  const last = parts[parts.length - 1];
  if (last?.type !== "error") throw new Error(`no error part in ${JSON.stringify(parts)}`);
  return last.error;
}

/** Every request body the server got conforms to OpenAI's schema for it, item by item for the Responses API. */
function expectValidRequests(schema: "CreateChatCompletionRequest" | "CreateResponse"): void {
  for (const request of server.requests) {
    expect(openAIIssues(schema, request.body)).toEqual([]);
    if (schema !== "CreateResponse") continue;
    const body = request.body as { input: Record<string, unknown>[]; tools?: unknown[] };
    for (const item of body.input) {
      const itemSchema =
        item.type === "function_call"
          ? "FunctionToolCall"
          : item.type === "function_call_output"
            ? "FunctionCallOutputItemParam"
            : "EasyInputMessage";
      expect(openAIIssues(itemSchema, item)).toEqual([]);
      if (Array.isArray(item.content)) {
        for (const part of item.content as { type: string }[]) {
          const partSchema = part.type === "input_image" ? "InputImageContent" : "InputTextContent";
          expect(openAIIssues(partSchema, part)).toEqual([]);
        }
      }
    }
    for (const tool of body.tools ?? []) expect(openAIIssues("FunctionTool", tool)).toEqual([]);
  }
}

const hello: ModelRequest = { messages: [{ role: "user", content: "Hello" }], options: {} };
const errorBody = (message: string, type: string, code: string | null = null) => ({
  error: { message, type, param: null, code },
});

describe("the recorded-shape fixtures", () => {
  it("have the shapes of OpenAI's OpenAPI description", () => {
    for (const name of ["chat-text.sse", "chat-parallel-tools.sse", "chat-reasoning.sse"]) {
      const chunks = fixture(name)
        .split("\n\n")
        .map((event) => event.replace(/^data: /, ""))
        .filter((data) => data.trim() && data !== "[DONE]");
      expect(chunks.length).toBeGreaterThan(2);
      for (const chunk of chunks) {
        expect(openAIIssues("CreateChatCompletionStreamResponse", JSON.parse(chunk))).toEqual([]);
      }
    }
    expect(openAIIssues("CreateChatCompletionResponse", jsonFixture("chat-completion.json"))).toEqual([]);
    for (const name of ["responses-tools.json", "responses-text.json"]) {
      const response = jsonFixture(name);
      expect(openAIIssues("Response", response)).toEqual([]);
      for (const item of response.output as { type: string }[]) {
        const schema = {
          message: "OutputMessage",
          reasoning: "ReasoningItem",
          function_call: "FunctionToolCall",
        }[item.type];
        expect(openAIIssues(schema!, item)).toEqual([]);
      }
    }
    expect(
      openAIIssues("ErrorResponse", errorBody("Rate limit reached", "requests", "rate_limit_exceeded")),
    ).toEqual([]);
  });
});

describe("OpenAICompatibleModel: Chat Completions", () => {
  it("is a language model with OpenAI's defaults, and needs api_base", () => {
    const defaults = new OpenAICompatibleModel({ apiBase: "https://api.openai.com/v1", apiKey: "k" });
    expect(isLanguageModel(defaults)).toBe(true);
    expect(defaults.provider).toBe("openai_compatible");
    expect(defaults.modelId).toBe("gpt-4o-mini");
    expect(defaults.apiStyle).toBe("chat_completions");
    expect(defaults.isReasoningModel).toBe(false);
    expect(defaults.countTokens("12345678")).toBe(2);
    let error: unknown;
    try {
      new OpenAICompatibleModel({ apiBase: "", apiKey: "k" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe('llm.api_base is required for provider "openai_compatible"');
  });

  it("POSTs a streamed call with the bearer key and include_usage, and streams the text, usage and finish", async () => {
    server.reply(streamReply(fixture("chat-text.sse"), { pieceSize: 13 }));
    const parts = await collect(
      model().stream({ ...hello, system: "Be brief.", options: { temperature: 0.3 } }),
    );
    const [request] = server.requests;
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.headers).toMatchObject({
      "content-type": "application/json",
      authorization: "Bearer sk-test",
    });
    expect(request?.body).toEqual({
      model: "gpt-4o",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello" },
      ],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.3,
    });
    expectValidRequests("CreateChatCompletionRequest");
    expect(parts).toEqual([
      { type: "text-delta", text: "Hello" },
      { type: "text-delta", text: ", wörld!" },
      {
        type: "usage",
        usage: { inputTokens: 1200, outputTokens: 14, totalTokens: 1214, cacheReadTokens: 1024 },
      },
      {
        type: "finish",
        stopReason: "end_turn",
        model: "gpt-4o-2024-08-06",
        responseId: "chatcmpl-BQb0iSFzE1zz1OVhaqg3u2Yqn1Ezf",
      },
    ]);
    const usage = parts[2]?.type === "usage" ? parts[2].usage : undefined;
    // 176 plain input × $2.50 + 1024 cached × $1.25 + 14 output × $10 (per 1M).
    expect(computeCost(usage!, resolvePricing("gpt-4o")).costUsd).toBeCloseTo(0.00186, 9);
  });

  it("maps a whole transcript, tools, an output schema and the pass-through options", async () => {
    server.reply(streamReply(fixture("chat-text.sse")));
    const request: ModelRequest = {
      system: [
        { type: "text", text: "You are a weather bot." },
        { type: "text", text: "Use metric units." },
      ],
      messages: [
        { role: "system", content: "Answer in English." },
        {
          role: "user",
          content: [
            { type: "text", text: "Weather here?" },
            { type: "image", data: "iVBORw0KGgo=" },
            { type: "image", data: "https://example.com/sky.jpg" },
          ],
        },
        {
          role: "assistant",
          content: "",
          reasoning: [{ type: "reasoning", text: "not sent to OpenAI" }],
          toolCalls: [
            {
              id: "call_1",
              name: "get_weather",
              arguments: { location: "Oslo" },
              rawArguments: '{"location":"Oslo"}',
            },
            {
              id: "call_2",
              name: "get_weather",
              arguments: {},
              rawArguments: "{oops",
              argumentsError: "bad JSON",
            },
          ],
        },
        { role: "tool", toolCallId: "call_1", toolName: "get_weather", content: "12°C" },
        {
          role: "tool",
          toolCallId: "call_2",
          toolName: "get_weather",
          content: "bad arguments",
          isError: true,
        },
        { role: "assistant", content: "It is 12°C in Oslo." },
      ],
      tools: [
        {
          name: "get_weather",
          description: "Weather for a city",
          inputSchema: {
            type: "object",
            properties: { location: { type: "string" } },
            required: ["location"],
          },
        },
      ],
      toolChoice: { type: "tool", name: "get_weather" },
      outputSchema: {
        name: "weather report",
        schema: {
          type: "object",
          properties: { celsius: { type: "number" } },
          required: ["celsius"],
          additionalProperties: false,
        },
      },
      options: { maxTokens: 300, seed: 42, top_p: 0.9, parallel_tool_calls: false },
    };
    await collect(model().stream(request));
    expect(bodyOf(0)).toEqual({
      model: "gpt-4o",
      messages: [
        { role: "system", content: "You are a weather bot.\n\nUse metric units." },
        { role: "system", content: "Answer in English." },
        {
          role: "user",
          content: [
            { type: "text", text: "Weather here?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
            { type: "image_url", image_url: { url: "https://example.com/sky.jpg" } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"location":"Oslo"}' },
            },
            { id: "call_2", type: "function", function: { name: "get_weather", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "12°C" },
        { role: "tool", tool_call_id: "call_2", content: "bad arguments" },
        { role: "assistant", content: "It is 12°C in Oslo." },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 300,
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "Weather for a city",
            parameters: {
              type: "object",
              properties: { location: { type: "string" } },
              required: ["location"],
            },
          },
        },
      ],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "weather_report",
          schema: {
            type: "object",
            properties: { celsius: { type: "number" } },
            required: ["celsius"],
            additionalProperties: false,
          },
          strict: true,
        },
      },
      seed: 42,
      top_p: 0.9,
      parallel_tool_calls: false,
    });
    expectValidRequests("CreateChatCompletionRequest");
  });

  it("asks for strict output only when the schema allows it, and drops parallel_tool_calls without tools", async () => {
    server.reply(streamReply(fixture("chat-text.sse")));
    await collect(
      model().stream({
        ...hello,
        toolChoice: "auto",
        outputSchema: { name: "out", schema: { type: "object", properties: { a: { type: "string" } } } },
        options: { parallel_tool_calls: true },
      }),
    );
    const body = bodyOf(0);
    expect(body.response_format).toEqual({
      type: "json_schema",
      json_schema: {
        name: "out",
        schema: { type: "object", properties: { a: { type: "string" } } },
        strict: false,
      },
    });
    expect(body.parallel_tool_calls).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
    expectValidRequests("CreateChatCompletionRequest");
  });

  it("assembles parallel tool-call deltas by index", async () => {
    server.reply(streamReply(fixture("chat-parallel-tools.sse"), { pieceSize: 17 }));
    expect(await collect(model().stream(hello))).toEqual([
      {
        type: "tool-call",
        id: "call_PieqNSej6kM9hgYbcQdbZSaC",
        name: "get_weather",
        arguments: '{"location": "Oslo"}',
      },
      {
        type: "tool-call",
        id: "call_qOfTGgDrItLORNfC6VwUbyLL",
        name: "get_weather",
        arguments: '{"location": "Paris"}',
      },
      { type: "usage", usage: { inputTokens: 91, outputTokens: 46, totalTokens: 137 } },
      {
        type: "finish",
        stopReason: "tool_use",
        model: "gpt-4o-2024-08-06",
        responseId: "chatcmpl-BcQ8ko2nz9B7CRvV0uVbcowidHpQU",
      },
    ]);
  });

  it("calls reasoning models with max_completion_tokens and no temperature, and reports reasoning tokens apart", async () => {
    server.reply(streamReply(fixture("chat-reasoning.sse")));
    const reasoner = model({ modelId: "o3-mini", maxTokens: 4000 });
    expect(reasoner.isReasoningModel).toBe(true);
    const parts = await collect(
      reasoner.stream({ ...hello, options: { temperature: 0.7, reasoning_effort: "high" } }),
    );
    expect(bodyOf(0)).toEqual({
      model: "o3-mini",
      messages: [{ role: "user", content: "Hello" }],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 4000,
      reasoning_effort: "high",
    });
    expectValidRequests("CreateChatCompletionRequest");
    expect(parts).toEqual([
      { type: "text-delta", text: "12,231" },
      {
        type: "usage",
        usage: { inputTokens: 30, outputTokens: 210, totalTokens: 240, reasoningTokens: 192 },
      },
      {
        type: "finish",
        stopReason: "end_turn",
        model: "o3-mini-2025-01-31",
        responseId: "chatcmpl-AqRzCdNtnQPRWzHGzLJ5jZ4ulvFsh",
      },
    ]);
    // Reasoning tokens are billed as output and already inside completion_tokens: 30 × $15 + 210 × $60 per 1M.
    const usage = parts[1]?.type === "usage" ? parts[1].usage : undefined;
    expect(computeCost(usage!, resolvePricing("o1")).costUsd).toBeCloseTo(0.01305, 9);
  });

  it("detects reasoning models by id unless reasoning_model says otherwise", async () => {
    server.reply(streamReply(fixture("chat-text.sse")));
    const options = { maxTokens: 50, temperature: 0.5 };
    await collect(model({ modelId: "o1", reasoningModel: false }).stream({ ...hello, options }));
    expect(bodyOf(-1)).toMatchObject({ max_tokens: 50, temperature: 0.5 });
    await collect(model({ modelId: "my-reasoner", reasoningModel: true }).stream({ ...hello, options }));
    expect(bodyOf(-1).max_completion_tokens).toBe(50);
    expect(bodyOf(-1).temperature).toBeUndefined();
    for (const [id, reasoning] of [
      ["o1", true],
      ["o4-mini-2025-04-16", true],
      ["openai/o3", true],
      ["gpt-5-thinking-mini", true],
      ["gpt-4o", false],
      ["llama3.1:8b", false],
      ["o1x", false],
    ] as const) {
      expect(model({ modelId: id }).isReasoningModel).toBe(reasoning);
    }
  });

  it("streams reasoning_content deltas of vLLM-style servers as reasoning", async () => {
    const chunk = (delta: unknown, finish: string | null = null) => ({
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1,
      model: "deepseek-r1",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const text = [
      chunk({ role: "assistant", reasoning_content: "Think" }),
      chunk({ reasoning_content: "ing." }),
      chunk({ content: "Done" }),
      chunk({}, "stop"),
    ]
      .map((data) => `data: ${JSON.stringify(data)}\n\n`)
      .join("");
    server.reply(streamReply(`${text}data: [DONE]\n\n`));
    expect(await collect(model().stream(hello))).toEqual([
      { type: "reasoning-delta", text: "Think" },
      { type: "reasoning-delta", text: "ing." },
      { type: "text-delta", text: "Done" },
      { type: "finish", stopReason: "end_turn", model: "deepseek-r1", responseId: "chatcmpl-1" },
    ]);
  });

  it("reads an answer that came as one chat.completion instead of a stream", async () => {
    server.reply(jsonReply(200, jsonFixture("chat-completion.json")));
    expect(await collect(model().stream(hello))).toEqual([
      {
        type: "tool-call",
        id: "call_qOfTGgDrItLORNfC6VwUbyLL",
        name: "get_weather",
        arguments: '{"location":"Shanghai"}',
      },
      { type: "usage", usage: { inputTokens: 91, outputTokens: 14, totalTokens: 105 } },
      {
        type: "finish",
        stopReason: "tool_use",
        model: "gpt-4o-2024-08-06",
        responseId: "chatcmpl-BcQ8ko2nz9B7CRvV0uVbcowidHpQU",
      },
    ]);
  });

  it("finds the endpoint under api_base with or without the path, or at stream_endpoint", async () => {
    server.reply(streamReply(fixture("chat-text.sse")));
    await collect(model({ apiBase: `${server.url}/v1/chat/completions/` }).stream(hello));
    expect(server.requests.at(-1)?.path).toBe("/v1/chat/completions");
    await collect(model({ streamEndpoint: "/stream/chat" }).stream(hello));
    expect(server.requests.at(-1)?.path).toBe("/v1/stream/chat");
    await collect(
      model({ apiBase: "https://unused.example", streamEndpoint: `${server.url}/s` }).stream(hello),
    );
    expect(server.requests.at(-1)?.path).toBe("/s");
  });

  it("lets extra_headers replace Keel's headers", async () => {
    server.reply(streamReply(fixture("chat-text.sse")));
    await collect(
      model({ extraHeaders: { Authorization: "Bearer gateway", "OpenAI-Organization": "org-1" } }).stream(
        hello,
      ),
    );
    expect(server.requests[0]?.headers).toMatchObject({
      authorization: "Bearer gateway",
      "openai-organization": "org-1",
    });
  });
});

describe("OpenAICompatibleModel: Chat Completions errors and retries", () => {
  it("fails a 400 at once with the vendor's message", async () => {
    const body = errorBody("Invalid value for 'temperature': must be at most 2.", "invalid_request_error");
    expect(openAIIssues("ErrorResponse", body)).toEqual([]);
    server.reply(jsonReply(400, body));
    const parts = await collect(model().stream(hello));
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ type: "error", errorType: "response" });
    const error = errorOf(parts) as LLMResponseError;
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      "OpenAI-compatible server answered HTTP 400 (invalid_request_error): Invalid value for 'temperature': must be at most 2.",
    );
    expect(server.requests).toHaveLength(1);
  });

  it("fails a 401 with a hint naming the key's variable", async () => {
    server.reply(
      jsonReply(
        401,
        errorBody("Incorrect API key provided: sk-test.", "invalid_request_error", "invalid_api_key"),
      ),
    );
    const error = errorOf(await collect(model().stream(hello)));
    expect(error).toBeInstanceOf(LLMResponseError);
    expect(error.message).toMatch(/\(invalid_request_error\): Incorrect API key provided/);
    expect(error.hint).toBe(
      "Check the API key in the environment variable OPENAI_API_KEY (llm.api_key_env names another)",
    );
  });

  it("retries a 429 after retry-after-ms, and a 503 and 504 with backoff", async () => {
    server.reply(
      jsonReply(429, errorBody("Rate limit reached for gpt-4o", "requests", "rate_limit_exceeded"), {
        "retry-after-ms": "1500",
      }),
      jsonReply(503, errorBody("The server is overloaded", "server_error")),
      jsonReply(504, errorBody("Gateway timeout", "server_error")),
      streamReply(fixture("chat-text.sse")),
    );
    const parts = await collect(model({ retry: { max_attempts: 4 } }).stream(hello));
    expect(parts.at(-1)).toMatchObject({ type: "finish", stopReason: "end_turn" });
    expect(server.requests).toHaveLength(4);
    expect(clock.sleeps).toEqual([1500, 1000, 2000]);
  });

  it("gives up on a 429 with the rate-limit error and its retryAfterMs", async () => {
    server.reply(
      jsonReply(429, errorBody("Rate limit reached", "requests", "rate_limit_exceeded"), {
        "retry-after": "7",
      }),
    );
    const parts = await collect(model({ retry: { max_attempts: 2 } }).stream(hello));
    const error = errorOf(parts) as LLMRateLimitError;
    expect(error).toBeInstanceOf(LLMRateLimitError);
    expect(error.retryAfterMs).toBe(7000);
    expect(error.context.attempts).toBe(2);
    expect(clock.sleeps).toEqual([7000]);
  });

  it("retries a 500 like a 503, and reports one that outlasts its attempts as a connection error", async () => {
    server.reply(
      jsonReply(500, errorBody("The server had an error", "server_error")),
      streamReply(fixture("chat-text.sse")),
    );
    const parts = await collect(model().stream(hello));
    expect(parts.at(-1)).toMatchObject({ type: "finish", stopReason: "end_turn" });
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([500]);

    server.reply(jsonReply(500, errorBody("The server had an error", "server_error")));
    const failed = await collect(model({ retry: { max_attempts: 2 } }).stream(hello));
    expect(failed[0]).toMatchObject({ type: "error", errorType: "connection" });
    expect(server.requests).toHaveLength(4);
  });

  it("reports a drop mid-stream as a connection error and a cut stream as ended early", async () => {
    const text = fixture("chat-text.sse");
    server.reply(streamReply(text, { dropAfter: text.indexOf("wörld") }));
    const dropped = await collect(model().stream(hello));
    expect(dropped[0]).toEqual({ type: "text-delta", text: "Hello" });
    expect(dropped[1]).toMatchObject({ type: "error", errorType: "connection" });
    expect(errorOf(dropped)).toBeInstanceOf(LLMConnectionError);
    expect(server.requests).toHaveLength(1);

    server.reply(streamReply(text.slice(0, text.indexOf('"finish_reason":"stop"') - 200)));
    const cut = await collect(model().stream(hello));
    expect(errorOf(cut).message).toBe("OpenAI-compatible server's stream ended before [DONE]");
  });

  it("times out a slow first byte and leaves no socket open", async () => {
    server.reply(silentReply());
    const parts = await collect(
      model({ timeoutMs: 50, retry: { retry_on_connection_errors: false } }).stream(hello),
    );
    expect(errorOf(parts).message).toBe("OpenAI-compatible server sent no response within 50 ms");
    expect(server.requests).toHaveLength(1);
    expect(await server.settledRequestSockets()).toBe(0);
  });

  it("types an error chunk inside the stream", async () => {
    server.reply(
      streamReply(`data: ${JSON.stringify(errorBody("Rate limit exceeded", "rate_limit_exceeded"))}\n\n`),
      streamReply('data: {"error":"model crashed"}\n\n'),
    );
    const limited = await collect(model({ retry: { max_attempts: 1 } }).stream(hello));
    expect(limited[0]).toMatchObject({ type: "error", errorType: "rate_limit" });
    const crashed = await collect(model({ retry: { max_attempts: 1 } }).stream(hello));
    expect(crashed[0]).toMatchObject({ type: "error", errorType: "response" });
    expect(errorOf(crashed).message).toBe(
      "OpenAI-compatible server sent an error in its stream (error): model crashed",
    );
  });
});

describe("OpenAICompatibleModel: Responses API", () => {
  it("is chosen by an api_base ending in /responses or by openai_api_style", () => {
    expect(model({ apiBase: "https://api.openai.com/v1/responses" }).apiStyle).toBe("responses");
    expect(model({ apiStyle: "responses" }).apiStyle).toBe("responses");
    expect(
      model({ apiBase: "https://api.openai.com/v1/responses", apiStyle: "chat_completions" }).apiStyle,
    ).toBe("chat_completions");
  });

  it("sends input, instructions, max_output_tokens and flat tools in one call, and reads output items", async () => {
    server.reply(jsonReply(200, jsonFixture("responses-tools.json")));
    const responses = model({ apiBase: `${server.url}/v1/responses`, modelId: "o4-mini", maxTokens: 2000 });
    const parts = await collect(
      responses.stream({
        system: "You are a weather bot.",
        messages: [
          { role: "system", content: "Answer in English." },
          {
            role: "user",
            content: [
              { type: "text", text: "Weather in Oslo and Paris?" },
              { type: "image", data: "/9j/4AAQ" },
            ],
          },
          {
            role: "assistant",
            content: "Checking.",
            toolCalls: [{ id: "call_0", name: "get_weather", arguments: { location: "Rome" } }],
          },
          { role: "tool", toolCallId: "call_0", toolName: "get_weather", content: "20°C" },
        ],
        tools: [
          {
            name: "get_weather",
            description: "Weather for a city",
            inputSchema: { type: "object", properties: { location: { type: "string" } } },
          },
        ],
        toolChoice: "auto",
        options: { temperature: 0.4, reasoning_effort: "low", parallel_tool_calls: true },
      }),
    );
    expect(server.requests[0]?.path).toBe("/v1/responses");
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-test");
    expect(bodyOf(0)).toEqual({
      model: "o4-mini",
      instructions: "You are a weather bot.\n\nAnswer in English.",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "Weather in Oslo and Paris?" },
            { type: "input_image", image_url: "data:image/jpeg;base64,/9j/4AAQ", detail: "auto" },
          ],
        },
        { role: "assistant", content: "Checking." },
        { type: "function_call", call_id: "call_0", name: "get_weather", arguments: '{"location":"Rome"}' },
        { type: "function_call_output", call_id: "call_0", output: "20°C" },
      ],
      max_output_tokens: 2000,
      tools: [
        {
          type: "function",
          name: "get_weather",
          description: "Weather for a city",
          parameters: { type: "object", properties: { location: { type: "string" } } },
          strict: false,
        },
      ],
      tool_choice: "auto",
      reasoning: { effort: "low" },
      parallel_tool_calls: true,
    });
    expectValidRequests("CreateResponse");
    expect(parts).toEqual([
      {
        type: "reasoning",
        reasoning: {
          type: "reasoning",
          text: "**Checking the weather**\n\nThe user asks about two cities, so I call the tool twice.",
        },
      },
      { type: "text-delta", text: "Let me check both cities." },
      { type: "tool-call", id: "call_12345xyz", name: "get_weather", arguments: '{"location":"Oslo"}' },
      { type: "tool-call", id: "call_67890abc", name: "get_weather", arguments: '{"location":"Paris"}' },
      {
        type: "usage",
        usage: {
          inputTokens: 328,
          outputTokens: 518,
          totalTokens: 846,
          cacheReadTokens: 128,
          reasoningTokens: 448,
        },
      },
      {
        type: "finish",
        stopReason: "tool_use",
        model: "o4-mini-2025-04-16",
        responseId: "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
      },
    ]);
  });

  it("sends an output schema as text.format and a temperature to a model that is not reasoning", async () => {
    server.reply(jsonReply(200, jsonFixture("responses-text.json")));
    const responses = model({ apiStyle: "responses" });
    const schema = {
      type: "object",
      properties: { answer: { type: "number" } },
      required: ["answer"],
      additionalProperties: false,
    };
    const parts = await collect(
      responses.stream({ ...hello, outputSchema: { name: "answer", schema }, options: { temperature: 0.1 } }),
    );
    expect(server.requests[0]?.path).toBe("/v1/responses");
    expect(bodyOf(0)).toEqual({
      model: "gpt-4o",
      input: [{ role: "user", content: "Hello" }],
      temperature: 0.1,
      text: { format: { type: "json_schema", name: "answer", schema, strict: true } },
    });
    expectValidRequests("CreateResponse");
    expect(parts).toEqual([
      { type: "text-delta", text: '{"answer":42}' },
      { type: "usage", usage: { inputTokens: 36, outputTokens: 87, totalTokens: 123, reasoningTokens: 64 } },
      {
        type: "finish",
        stopReason: "end_turn",
        model: "o4-mini-2025-04-16",
        responseId: "resp_67ccd3a9da748190baa7f1570fe91ac604becb25c45c1d41",
      },
    ]);
  });

  it("reads an incomplete response as max_tokens, a refusal as text, and a failed one as its error", async () => {
    const base = jsonFixture("responses-text.json");
    server.reply(
      jsonReply(200, {
        ...base,
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        output: [
          {
            id: "msg_1",
            type: "message",
            status: "incomplete",
            role: "assistant",
            content: [{ type: "refusal", refusal: "I can't help with that." }],
          },
        ],
      }),
      jsonReply(200, {
        ...base,
        status: "failed",
        output: [],
        error: { code: "server_error", message: "boom" },
      }),
    );
    const responses = model({ apiStyle: "responses", retry: { max_attempts: 1 } });
    const incomplete = await collect(responses.stream(hello));
    expect(incomplete[0]).toEqual({ type: "text-delta", text: "I can't help with that." });
    expect(incomplete.at(-1)).toMatchObject({ type: "finish", stopReason: "max_tokens" });
    const failed = await collect(responses.stream(hello));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ type: "error", errorType: "connection" });
    expect(errorOf(failed).message).toBe("OpenAI-compatible server reported an error (server_error): boom");
  });

  it("retries a 429 of the Responses API", async () => {
    server.reply(
      jsonReply(429, errorBody("Rate limit reached", "requests", "rate_limit_exceeded"), {
        "retry-after": "1",
      }),
      jsonReply(200, jsonFixture("responses-text.json")),
    );
    const parts = await collect(model({ apiStyle: "responses" }).stream(hello));
    expect(parts[0]).toEqual({ type: "text-delta", text: '{"answer":42}' });
    expect(clock.sleeps).toEqual([1000]);
    expect(server.requests[1]?.rawBody).toBe(server.requests[0]?.rawBody);
  });
});
