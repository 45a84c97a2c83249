import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  FakeClock,
  FakeModelServer,
  jsonReply,
  silentReply,
  streamReply,
} from "../../../../test/support/fake-model-server.js";
import {
  isLanguageModel,
  type ModelRequest,
  type ModelStreamPart,
} from "../../../contracts/language-model.js";
import type { AssistantMessage, ReasoningPart } from "../../../contracts/message.js";
import { LLMConnectionError, LLMRateLimitError, LLMResponseError } from "../../../errors/error-classes.js";
import type { KeelError } from "../../../errors/keel-error.js";
import { computeCost, resolvePricing } from "../../pricing.js";
import { AnthropicModel, type AnthropicModelOptions } from "./anthropic-model.js";

const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8");

let server: FakeModelServer;
let clock: FakeClock;

beforeEach(async () => {
  server = await FakeModelServer.start();
  clock = new FakeClock();
});

afterEach(async () => {
  await server.close();
});

function model(options: Partial<AnthropicModelOptions> = {}): AnthropicModel {
  return new AnthropicModel({
    apiKey: "sk-ant-test",
    keyVariable: "ANTHROPIC_API_KEY",
    modelId: "claude-sonnet-4-6",
    apiBase: server.url,
    clock,
    ...options,
  });
}

async function collect(parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const collected: ModelStreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

const hello: ModelRequest = { messages: [{ role: "user", content: "Hello" }], options: {} };

/** The JSON body of the server's request at `index` (negative counts from the end). */
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

describe("AnthropicModel: what it sends", () => {
  it("is a language model with Anthropic's defaults", () => {
    const defaults = new AnthropicModel({ apiKey: "k" });
    expect(isLanguageModel(defaults)).toBe(true);
    expect(defaults.provider).toBe("anthropic");
    expect(defaults.modelId).toBe("claude-3-haiku-20240307");
    expect(defaults.countTokens("12345678")).toBe(2);
  });

  it("POSTs a streamed Messages call with the key and the API version", async () => {
    server.reply(streamReply(fixture("text.sse")));
    await collect(model().stream({ ...hello, system: "Be brief." }));
    const [request] = server.requests;
    expect(request?.path).toBe("/v1/messages");
    expect(request?.headers).toMatchObject({
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      "x-api-key": "sk-ant-test",
    });
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.body).toEqual({
      model: "claude-sonnet-4-6",
      max_tokens: 1024,
      system: "Be brief.",
      messages: [{ role: "user", content: "Hello" }],
      stream: true,
    });
  });

  it("maps a whole transcript: system blocks, images, reasoning, tool calls and results, tools, options", async () => {
    server.reply(streamReply(fixture("text.sse")));
    const assistant: AssistantMessage = {
      role: "assistant",
      content: "Let me look.",
      reasoning: [
        { type: "reasoning", text: "I need the weather.", signature: "sig-1" },
        { type: "reasoning", text: "", redactedData: "opaque==" },
        { type: "reasoning", text: "unsigned reasoning from another provider" },
      ],
      toolCalls: [
        { id: "toolu_1", name: "get_weather", arguments: { location: "Oslo" } },
        { id: "toolu_2", name: "get_time", arguments: {} },
      ],
    };
    const request: ModelRequest = {
      system: [
        { type: "text", text: "You are a weather bot." },
        { type: "text", text: "Long reference text.", cacheControl: { type: "ephemeral" } },
      ],
      messages: [
        { role: "system", content: "Answer in English." },
        {
          role: "user",
          content: [
            { type: "text", text: "What is this and the weather?" },
            { type: "image", data: "iVBORw0KGgo=" },
            { type: "image", data: "/9j/4AAQ", mediaType: "image/jpeg" },
            { type: "image", data: "https://example.com/cat.png" },
          ],
        },
        assistant,
        { role: "tool", toolCallId: "toolu_1", toolName: "get_weather", content: "12°C" },
        { role: "tool", toolCallId: "toolu_2", toolName: "get_time", content: "no clock", isError: true },
        { role: "user", content: "Thanks" },
        { role: "assistant", content: "" },
      ],
      tools: [
        {
          name: "get_weather",
          description: "Weather for a city",
          inputSchema: { type: "object", properties: { location: { type: "string" } } },
          providerOptions: { cache_control: { type: "ephemeral" } },
        },
      ],
      toolChoice: "required",
      options: {
        temperature: 0.2,
        maxTokens: 2048,
        thinking: { type: "enabled", budget_tokens: 1024 },
        top_k: 5,
        seed: 7,
        parallel_tool_calls: false,
      },
    };
    await collect(model().stream(request));
    expect(server.requests[0]?.body).toEqual({
      model: "claude-sonnet-4-6",
      max_tokens: 2048,
      system: [
        { type: "text", text: "You are a weather bot." },
        { type: "text", text: "Long reference text.", cache_control: { type: "ephemeral" } },
        { type: "text", text: "Answer in English." },
      ],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this and the weather?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
            { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/4AAQ" } },
            { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "I need the weather.", signature: "sig-1" },
            { type: "redacted_thinking", data: "opaque==" },
            { type: "text", text: "Let me look." },
            { type: "tool_use", id: "toolu_1", name: "get_weather", input: { location: "Oslo" } },
            { type: "tool_use", id: "toolu_2", name: "get_time", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "12°C" },
            { type: "tool_result", tool_use_id: "toolu_2", content: "no clock", is_error: true },
            { type: "text", text: "Thanks" },
          ],
        },
      ],
      temperature: 0.2,
      tools: [
        {
          name: "get_weather",
          description: "Weather for a city",
          input_schema: { type: "object", properties: { location: { type: "string" } } },
          cache_control: { type: "ephemeral" },
        },
      ],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      thinking: { type: "enabled", budget_tokens: 1024 },
      top_k: 5,
      stream: true,
    });
  });

  it("maps each tool choice", async () => {
    server.reply(streamReply(fixture("text.sse")));
    const tools = [{ name: "t", description: "d", inputSchema: { type: "object" } }];
    const choices: [ModelRequest["toolChoice"], unknown][] = [
      ["auto", { type: "auto" }],
      ["none", { type: "none" }],
      [
        { type: "tool", name: "t" },
        { type: "tool", name: "t" },
      ],
      [undefined, undefined],
    ];
    for (const [toolChoice, expected] of choices) {
      const request: ModelRequest = { ...hello, tools };
      if (toolChoice) request.toolChoice = toolChoice;
      await collect(model().stream(request));
      expect(bodyOf(-1).tool_choice).toEqual(expected);
    }
    await collect(model().stream({ ...hello, tools, options: { parallel_tool_calls: false } }));
    expect(bodyOf(-1).tool_choice).toEqual({
      type: "auto",
      disable_parallel_tool_use: true,
    });
  });

  it("lets extra_headers and a run's clientKwargs replace Keel's headers and extend the body", async () => {
    server.reply(streamReply(fixture("text.sse")));
    const custom = model({
      extraHeaders: { "Anthropic-Version": "2024-10-22", "anthropic-beta": "prompt-caching-2024-07-31" },
    });
    await collect(
      custom.stream({
        ...hello,
        clientKwargs: { extra_headers: { "x-trace": "t-1" }, extra_body: { metadata: { user_id: "u1" } } },
      }),
    );
    const [request] = server.requests;
    expect(request?.headers["anthropic-version"]).toBe("2024-10-22");
    expect(request?.headers["anthropic-beta"]).toBe("prompt-caching-2024-07-31");
    expect(request?.headers["x-trace"]).toBe("t-1");
    expect(bodyOf(0).metadata).toEqual({ user_id: "u1" });
  });

  it("finds the endpoint under any form of api_base, or at stream_endpoint", async () => {
    server.reply(streamReply(fixture("text.sse")));
    for (const [apiBase, streamEndpoint, path] of [
      [`${server.url}/`, undefined, "/v1/messages"],
      [`${server.url}/v1`, undefined, "/v1/messages"],
      [`${server.url}/proxy/v1/messages`, undefined, "/proxy/v1/messages"],
      [server.url, "/gateway/anthropic", "/gateway/anthropic"],
      ["https://unused.example", `${server.url}/full`, "/full"],
    ] as const) {
      const options: Partial<AnthropicModelOptions> = { apiBase };
      if (streamEndpoint) options.streamEndpoint = streamEndpoint;
      await collect(model(options).stream(hello));
      expect(server.requests.at(-1)?.path).toBe(path);
    }
  });
});

describe("AnthropicModel: what it makes of the answer", () => {
  it("streams text, then usage with cache tokens and the finish", async () => {
    server.reply(streamReply(fixture("text.sse"), { pieceSize: 7 }));
    const parts = await collect(model().stream(hello));
    expect(parts).toEqual([
      { type: "text-delta", text: "Hello" },
      { type: "text-delta", text: ", wörld!" },
      {
        type: "usage",
        usage: {
          inputTokens: 2125,
          outputTokens: 15,
          totalTokens: 2140,
          cacheReadTokens: 2000,
          cacheCreationTokens: 100,
        },
      },
      {
        type: "finish",
        stopReason: "end_turn",
        model: "claude-sonnet-4-6",
        responseId: "msg_01XFDUDYJgAACzvnptvVoYEL",
      },
    ]);
    const usage = parts[2]?.type === "usage" ? parts[2].usage : undefined;
    // 25 plain input × $3 + 15 output × $15 + 2000 cache reads × $0.30 + 100 cache writes × $3.75 (per 1M).
    expect(computeCost(usage!, resolvePricing("claude-sonnet-4-6"))).toEqual({
      costUsd: expect.closeTo(0.001275, 9),
      breakdown: {
        input: expect.closeTo(0.000075, 9),
        output: expect.closeTo(0.000225, 9),
        cachedRead: expect.closeTo(0.0006, 9),
        cachedWrite: expect.closeTo(0.000375, 9),
      },
    });
  });

  it("assembles parallel tool calls, each at its block's end", async () => {
    server.reply(streamReply(fixture("parallel-tool-use.sse"), { pieceSize: 11 }));
    expect(await collect(model().stream(hello))).toEqual([
      { type: "text-delta", text: "I'll check both cities." },
      {
        type: "tool-call",
        id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        name: "get_weather",
        arguments: '{"location": "San Francisco, CA"}',
      },
      {
        type: "tool-call",
        id: "toolu_01VqG2jCdyjoB9HMTFnCKeo2",
        name: "get_weather",
        arguments: '{"location": "Paris", "unit": "celsius"}',
      },
      { type: "tool-call", id: "toolu_01NoArgs", name: "get_time", arguments: {} },
      { type: "usage", usage: { inputTokens: 472, outputTokens: 89, totalTokens: 561 } },
      {
        type: "finish",
        stopReason: "tool_use",
        model: "claude-sonnet-4-6",
        responseId: "msg_014p7gG3wDgGV9EUtLvnow3U",
      },
    ]);
  });

  it("keeps thinking and redacted thinking apart from the text, and replays them unchanged", async () => {
    server.reply(streamReply(fixture("thinking.sse")));
    const parts = await collect(model().stream(hello));
    expect(parts).toEqual([
      { type: "reasoning-delta", text: "Let me solve this step by step:\n\n1. 27 * 400 = 10,800" },
      { type: "reasoning-delta", text: "\n2. 27 * 53 = 1,431" },
      {
        type: "reasoning",
        reasoning: {
          type: "reasoning",
          text: "Let me solve this step by step:\n\n1. 27 * 400 = 10,800\n2. 27 * 53 = 1,431",
          signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
        },
      },
      {
        type: "reasoning",
        reasoning: {
          type: "reasoning",
          text: "",
          redactedData:
            "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB9URj2pLmN3kF8/dW5hR7xJ0aP3oLvHqQ",
        },
      },
      { type: "text-delta", text: "27 * 453 = 12,231" },
      { type: "usage", usage: { inputTokens: 778, outputTokens: 310, totalTokens: 1088 } },
      { type: "finish", stopReason: "end_turn", model: "claude-sonnet-4-6", responseId: "msg_01Thinking" },
    ]);
    const reasoning = parts.flatMap((part) =>
      part.type === "reasoning" ? [part.reasoning] : [],
    ) as ReasoningPart[];
    await collect(
      model().stream({
        messages: [
          { role: "user", content: "What is 27 * 453?" },
          { role: "assistant", content: "27 * 453 = 12,231", reasoning },
          { role: "user", content: "Thanks" },
        ],
        options: {},
      }),
    );
    expect((bodyOf(1).messages as unknown[])[1]).toEqual({
      role: "assistant",
      content: [
        {
          type: "thinking",
          thinking: "Let me solve this step by step:\n\n1. 27 * 400 = 10,800\n2. 27 * 53 = 1,431",
          signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
        },
        {
          type: "redacted_thinking",
          data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB9URj2pLmN3kF8/dW5hR7xJ0aP3oLvHqQ",
        },
        { type: "text", text: "27 * 453 = 12,231" },
      ],
    });
  });

  it("reads an answer that came as one JSON message instead of a stream", async () => {
    server.reply(jsonReply(200, JSON.parse(fixture("tool-use-message.json"))));
    expect(await collect(model().stream(hello))).toEqual([
      {
        type: "reasoning",
        reasoning: { type: "reasoning", text: "The user wants the weather.", signature: "EuYBCkQYAiJA" },
      },
      { type: "text-delta", text: "I'll look that up." },
      {
        type: "tool-call",
        id: "toolu_01A09q90qw90lq917835lq9",
        name: "get_weather",
        arguments: { location: "Oslo" },
      },
      { type: "usage", usage: { inputTokens: 2095, outputTokens: 503, totalTokens: 2598 } },
      {
        type: "finish",
        stopReason: "tool_use",
        model: "claude-sonnet-4-6",
        responseId: "msg_01Aq9w938a90dw8q",
      },
    ]);
  });
});

describe("AnthropicModel: errors and retries", () => {
  const errorBody = (type: string, message: string) => ({ type: "error", error: { type, message } });

  it("fails a 400 at once with the vendor's message", async () => {
    server.reply(jsonReply(400, errorBody("invalid_request_error", "max_tokens: Field required")));
    const parts = await collect(model().stream(hello));
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ type: "error", errorType: "response" });
    const error = errorOf(parts) as LLMResponseError;
    expect(error).toBeInstanceOf(LLMResponseError);
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      "Anthropic answered HTTP 400 (invalid_request_error): max_tokens: Field required",
    );
    expect(server.requests).toHaveLength(1);
  });

  it("fails a 401 at once with a hint naming the key's variable", async () => {
    server.reply(jsonReply(401, errorBody("authentication_error", "invalid x-api-key")));
    const error = errorOf(await collect(model({ keyVariable: "MY_ANTHROPIC_KEY" }).stream(hello)));
    expect(error).toBeInstanceOf(LLMResponseError);
    expect(error.hint).toBe(
      "Check the API key in the environment variable MY_ANTHROPIC_KEY (llm.api_key_env names another)",
    );
    expect(server.requests).toHaveLength(1);
  });

  it("retries a 429 after its Retry-After, then streams the answer", async () => {
    server.reply(
      jsonReply(429, errorBody("rate_limit_error", "Number of requests has exceeded your rate limit"), {
        "retry-after": "2",
      }),
      streamReply(fixture("text.sse")),
    );
    const parts = await collect(model().stream(hello));
    expect(parts[0]).toEqual({ type: "text-delta", text: "Hello" });
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([2000]);
    expect(server.requests[1]?.rawBody).toBe(server.requests[0]?.rawBody);
  });

  it("gives up after max_attempts with a rate-limit error carrying retryAfterMs", async () => {
    server.reply(jsonReply(429, errorBody("rate_limit_error", "slow down"), { "retry-after": "1" }));
    const parts = await collect(model().stream(hello));
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ type: "error", errorType: "rate_limit" });
    const error = errorOf(parts) as LLMRateLimitError;
    expect(error).toBeInstanceOf(LLMRateLimitError);
    expect(error.retryAfterMs).toBe(1000);
    expect(error.context).toMatchObject({ status: 429, attempts: 3 });
    expect(server.requests).toHaveLength(3);
    expect(clock.sleeps).toEqual([1000, 1000]);
  });

  it("treats 529 as a rate limit and retries it", async () => {
    server.reply(
      jsonReply(529, errorBody("overloaded_error", "Overloaded")),
      streamReply(fixture("text.sse")),
    );
    const parts = await collect(model().stream(hello));
    expect(parts.at(-1)).toMatchObject({ type: "finish" });
    expect(clock.sleeps).toEqual([500]);

    server.reply(jsonReply(529, errorBody("overloaded_error", "Overloaded")));
    const error = errorOf(await collect(model({ retry: { max_attempts: 1 } }).stream(hello)));
    expect(error).toBeInstanceOf(LLMRateLimitError);
  });

  it("retries an overloaded_error sent inside the stream before any content", async () => {
    server.reply(streamReply(fixture("overloaded.sse")), streamReply(fixture("text.sse")));
    const parts = await collect(model().stream(hello));
    expect(parts.at(-1)).toMatchObject({ type: "finish", stopReason: "end_turn" });
    expect(server.requests).toHaveLength(2);

    server.reply(streamReply(fixture("overloaded.sse")));
    const exhausted = await collect(model({ retry: { max_attempts: 2 } }).stream(hello));
    expect(exhausted).toHaveLength(1);
    expect(exhausted[0]).toMatchObject({ type: "error", errorType: "rate_limit" });
    expect(errorOf(exhausted).message).toBe(
      "Anthropic sent an error in its stream (overloaded_error): Overloaded",
    );
  });

  it("retries a 500 like a 503, then streams the answer", async () => {
    server.reply(
      jsonReply(500, errorBody("api_error", "Internal server error")),
      streamReply(fixture("text.sse")),
    );
    const parts = await collect(model().stream(hello));
    expect(parts[0]).toEqual({ type: "text-delta", text: "Hello" });
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([500]);
  });

  it("reports a 500 that outlasts its attempts as a connection error", async () => {
    server.reply(jsonReply(500, errorBody("api_error", "Internal server error")));
    const parts = await collect(model({ retry: { max_attempts: 2 } }).stream(hello));
    expect(parts[0]).toMatchObject({ type: "error", errorType: "connection" });
    expect(errorOf(parts)).toBeInstanceOf(LLMConnectionError);
    expect(errorOf(parts).context).toMatchObject({ status: 500, attempts: 2 });
    expect(server.requests).toHaveLength(2);
  });

  it("retries a 503 with exponential backoff until it gives up", async () => {
    server.reply(jsonReply(503, errorBody("api_error", "Service unavailable")));
    const parts = await collect(model({ retry: { max_attempts: 4, initial_backoff_ms: 100 } }).stream(hello));
    expect(parts[0]).toMatchObject({ type: "error", errorType: "connection" });
    expect(errorOf(parts).context).toMatchObject({ status: 503, attempts: 4 });
    expect(clock.sleeps).toEqual([100, 200, 400]);
  });

  it("reports a connection dropped mid-stream after text as a connection error, without retrying", async () => {
    const text = fixture("text.sse");
    server.reply(streamReply(text, { dropAfter: text.indexOf("wörld") }));
    const parts = await collect(model().stream(hello));
    expect(parts[0]).toEqual({ type: "text-delta", text: "Hello" });
    expect(parts[1]).toMatchObject({ type: "error", errorType: "connection" });
    expect(errorOf(parts)).toBeInstanceOf(LLMConnectionError);
    expect(server.requests).toHaveLength(1);
  });

  it("retries a stream that ends before any content, and says when it ended early", async () => {
    const text = fixture("text.sse");
    server.reply(streamReply(text, { dropAfter: text.indexOf("event: content_block_start") }));
    const parts = await collect(model({ retry: { max_attempts: 2 } }).stream(hello));
    expect(server.requests).toHaveLength(2);
    expect(parts).toHaveLength(1);
    expect(errorOf(parts)).toBeInstanceOf(LLMConnectionError);

    server.reply(streamReply(text.slice(0, text.indexOf("event: message_stop"))));
    const cut = await collect(model({ retry: { max_attempts: 1 } }).stream(hello));
    expect(errorOf(cut).message).toBe("Anthropic's stream ended before message_stop");
  });

  it("times out a slow first byte, retries, and leaves no socket open", async () => {
    server.reply(silentReply());
    const parts = await collect(model({ timeoutMs: 50, retry: { max_attempts: 2 } }).stream(hello));
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ type: "error", errorType: "connection" });
    expect(errorOf(parts).message).toBe("Anthropic sent no response within 50 ms");
    expect(server.requests).toHaveLength(2);
    expect(await server.settledRequestSockets()).toBe(0);
  });

  it("stops at once when the run is cancelled, with the run's reason", async () => {
    server.reply(silentReply());
    const controller = new AbortController();
    const pending = collect(model().stream({ ...hello, signal: controller.signal }));
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const reason = new Error("cancelled by the user");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(server.requests).toHaveLength(1);
    expect(await server.settledRequestSockets()).toBe(0);
  });

  it("fails a malformed event as a response error", async () => {
    server.reply(streamReply("event: message_start\ndata: {not json\n\n"));
    const parts = await collect(model().stream(hello));
    expect(parts[0]).toMatchObject({ type: "error", errorType: "response" });
  });
});
