import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type Logger, Runtime, setLogger } from "../src/index.js";
import { FakeModelServer, jsonReply } from "./support/fake-model-server.js";
import { collect } from "./support/harness.js";
import { openAIIssues } from "./support/openai-openapi.js";
import { anthropicTurn, chatTurn } from "./support/provider-replies.js";

/** The ReAct loop with tools over each HTTP provider, against an in-process server speaking its wire format. */

const KEY_VARIABLE = "KEEL_TEST_PROVIDER_KEY";

const getWeather = defineTool({
  name: "get_weather",
  description: "The weather in a city",
  inputSchema: z.object({ city: z.string() }),
  execute: ({ city }) => (city === "Oslo" ? "12°C and rain" : "21°C and sun"),
});

let server: FakeModelServer;
let runtime: Runtime | undefined;

beforeEach(async () => {
  server = await FakeModelServer.start();
  process.env[KEY_VARIABLE] = "sk-e2e";
});

afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  delete process.env[KEY_VARIABLE];
  await server.close();
});

async function runtimeFor(llm: Record<string, unknown>): Promise<Runtime> {
  runtime = await Runtime.fromDict({
    agents: [
      {
        id: "weather",
        name: "Weather",
        instructions: "Use get_weather for weather questions.",
        tools: [getWeather],
        llm: { api_key_env: KEY_VARIABLE, retry: { max_attempts: 1 }, ...llm },
      },
    ],
  });
  return runtime;
}

function bodyOf(index: number): Record<string, unknown> {
  const request = server.requests[index];
  if (!request) throw new Error(`no request ${index}`);
  return request.body as Record<string, unknown>;
}

// ── Anthropic ────────────────────────────────────────────────────────────────────────────────────────────────

describe("the ReAct loop over the anthropic provider", () => {
  it("calls a tool, replays thinking and the tool call, answers, and counts usage and cost", async () => {
    server.reply(
      anthropicTurn({
        id: "msg_1",
        blocks: [
          { type: "thinking", thinking: "The user wants Oslo's weather.", signature: "sig-abc" },
          { type: "text", text: "Let me check." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } },
        ],
        stopReason: "tool_use",
        usage: {
          input_tokens: 400,
          cache_read_input_tokens: 1000,
          cache_creation_input_tokens: 0,
          output_tokens: 40,
        },
      }),
      anthropicTurn({
        id: "msg_2",
        blocks: [{ type: "text", text: "It is 12°C and raining in Oslo." }],
        stopReason: "end_turn",
        usage: {
          input_tokens: 480,
          cache_read_input_tokens: 1000,
          cache_creation_input_tokens: 0,
          output_tokens: 12,
        },
      }),
    );
    const keel = await runtimeFor({
      provider: "anthropic",
      model: "claude-sonnet-4-6",
      api_base: server.url,
    });
    const result = await keel.runDetailed({ agentId: "weather", inputText: "Weather in Oslo?" });

    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe("It is 12°C and raining in Oslo.");
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.headers["x-api-key"]).toBe("sk-e2e");
    const first = bodyOf(0);
    expect(first.system).toBe("Use get_weather for weather questions.");
    expect(first.messages).toEqual([{ role: "user", content: "Weather in Oslo?" }]);
    expect(first.tools).toEqual([
      {
        name: "get_weather",
        description: "The weather in a city",
        input_schema: expect.objectContaining({ type: "object", properties: { city: { type: "string" } } }),
      },
    ]);
    const second = bodyOf(1).messages as Record<string, unknown>[];
    expect(second[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "The user wants Oslo's weather.", signature: "sig-abc" },
        { type: "text", text: "Let me check." },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } },
      ],
    });
    expect(second[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: expect.stringContaining("12°C and rain") },
      ],
    });

    expect(result.usage).toMatchObject({
      llmCalls: 2,
      toolCalls: 1,
      inputTokens: 2880,
      outputTokens: 52,
      inputTokensCached: 2000,
      inputTokensCacheCreation: 0,
    });
    // 880 plain input × $3 + 52 output × $15 + 2000 cache reads × $0.30, per 1M tokens.
    expect(result.usage.costUsd).toBeCloseTo(0.00402, 9);
  });

  it("stops with budget_exhausted once maxCostUsd is crossed", async () => {
    server.reply(
      anthropicTurn({
        id: "msg_1",
        blocks: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } }],
        stopReason: "tool_use",
        usage: { input_tokens: 100_000, output_tokens: 10 },
      }),
    );
    const keel = await runtimeFor({
      provider: "anthropic",
      model: "claude-sonnet-4-6",
      api_base: server.url,
    });
    const result = await keel.runDetailed({
      agentId: "weather",
      inputText: "Weather?",
      budget: { maxCostUsd: 0.1 },
    });
    expect(result.stopReason).toBe("budget_exhausted");
    expect(result.usage.costUsd).toBeCloseTo(0.30015, 9);
    expect(server.requests).toHaveLength(1);
  });

  it("fails the run with the typed error and its hint on a 401", async () => {
    server.reply(
      jsonReply(401, {
        type: "error",
        error: { type: "authentication_error", message: "invalid x-api-key" },
      }),
    );
    const keel = await runtimeFor({ provider: "anthropic", api_base: server.url });
    const result = await keel.runDetailed({ agentId: "weather", inputText: "hi" });
    expect(result.stopReason).toBe("failed");
    expect(result.errorDetails).toMatchObject({
      code: "llm.response",
      message: "Anthropic answered HTTP 401 (authentication_error): invalid x-api-key",
      hint: `Check the API key in the environment variable ${KEY_VARIABLE} (llm.api_key_env names another)`,
      retryable: false,
    });
  });

  it("fails when the agent loads, before any request, when its key is not set", async () => {
    const keel = await runtimeFor({
      provider: "anthropic",
      api_base: server.url,
      api_key_env: "KEEL_TEST_UNSET_KEY",
    });
    await expect(keel.runDetailed({ agentId: "weather", inputText: "hi" })).rejects.toMatchObject({
      code: "config.error",
      message:
        'llm.provider "anthropic" needs an API key, and the environment variable KEEL_TEST_UNSET_KEY is not set',
      hint: "Set KEEL_TEST_UNSET_KEY (export KEEL_TEST_UNSET_KEY=...), or name another variable in llm.api_key_env",
    });
    expect(server.requests).toHaveLength(0);
  });
});

// ── OpenAI-compatible ────────────────────────────────────────────────────────────────────────────────────────

describe("the ReAct loop over the openai_compatible provider", () => {
  it("Chat Completions: runs parallel tool calls and answers, counting usage and cost", async () => {
    server.reply(
      chatTurn({
        deltas: [
          { role: "assistant", content: null },
          {
            tool_calls: [
              { index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } },
            ],
          },
          { tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] },
          {
            tool_calls: [
              {
                index: 1,
                id: "call_b",
                type: "function",
                function: { name: "get_weather", arguments: '{"ci' },
              },
            ],
          },
          { tool_calls: [{ index: 1, function: { arguments: 'ty":"Rome"}' } }] },
        ],
        finish: "tool_calls",
        usage: { prompt_tokens: 120, completion_tokens: 30 },
      }),
      chatTurn({
        deltas: [{ role: "assistant", content: "Oslo: 12°C, " }, { content: "Rome: 21°C." }],
        finish: "stop",
        usage: { prompt_tokens: 200, completion_tokens: 10 },
      }),
    );
    const keel = await runtimeFor({
      provider: "openai_compatible",
      api_base: `${server.url}/v1`,
      model: "gpt-4o-mini",
      seed: 1,
    });
    const result = await keel.runDetailed({ agentId: "weather", inputText: "Oslo and Rome?" });

    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe("Oslo: 12°C, Rome: 21°C.");
    expect(server.requests[0]?.path).toBe("/v1/chat/completions");
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-e2e");
    for (const request of server.requests) {
      expect(openAIIssues("CreateChatCompletionRequest", request.body)).toEqual([]);
    }
    expect(bodyOf(0)).toMatchObject({ seed: 1, stream: true, stream_options: { include_usage: true } });
    const messages = bodyOf(1).messages as Record<string, unknown>[];
    expect(messages.slice(1)).toEqual([
      { role: "user", content: "Oslo and Rome?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
          { id: "call_b", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: expect.stringContaining("12°C and rain") },
      { role: "tool", tool_call_id: "call_b", content: expect.stringContaining("21°C and sun") },
    ]);
    expect(result.usage).toMatchObject({ llmCalls: 2, toolCalls: 2, inputTokens: 320, outputTokens: 40 });
    // 320 × $0.15 + 40 × $0.60 per 1M.
    expect(result.usage.costUsd).toBeCloseTo(0.000072, 12);
  });

  it("Responses API: calls a tool with function_call items and answers", async () => {
    const response = (
      id: string,
      output: unknown[],
      usage: { input_tokens: number; output_tokens: number },
    ) =>
      jsonReply(200, {
        id,
        object: "response",
        created_at: 1741476542,
        status: "completed",
        error: null,
        incomplete_details: null,
        model: "gpt-4o-mini-2024-07-18",
        output,
        parallel_tool_calls: true,
        tool_choice: "auto",
        tools: [],
        usage: {
          ...usage,
          total_tokens: usage.input_tokens + usage.output_tokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens_details: { reasoning_tokens: 0 },
        },
      });
    server.reply(
      response(
        "resp_1",
        [
          {
            id: "fc_1",
            type: "function_call",
            status: "completed",
            call_id: "call_1",
            name: "get_weather",
            arguments: '{"city":"Rome"}',
          },
        ],
        { input_tokens: 90, output_tokens: 15 },
      ),
      response(
        "resp_2",
        [
          {
            id: "msg_2",
            type: "message",
            status: "completed",
            role: "assistant",
            content: [{ type: "output_text", text: "Rome: 21°C and sunny.", annotations: [], logprobs: [] }],
          },
        ],
        { input_tokens: 130, output_tokens: 8 },
      ),
    );
    const keel = await runtimeFor({
      provider: "openai_compatible",
      api_base: `${server.url}/v1/responses`,
      model: "gpt-4o-mini",
    });
    const result = await keel.runDetailed({ agentId: "weather", inputText: "Rome?" });

    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe("Rome: 21°C and sunny.");
    expect(server.requests.map((request) => request.path)).toEqual(["/v1/responses", "/v1/responses"]);
    for (const request of server.requests) expect(openAIIssues("CreateResponse", request.body)).toEqual([]);
    expect(bodyOf(0).instructions).toBe("Use get_weather for weather questions.");
    expect(bodyOf(1).input).toEqual([
      { role: "user", content: "Rome?" },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Rome"}' },
      { type: "function_call_output", call_id: "call_1", output: expect.stringContaining("21°C and sun") },
    ]);
    expect(result.usage).toMatchObject({ llmCalls: 2, inputTokens: 220, outputTokens: 23 });
    expect(result.usage.costUsd).toBeCloseTo((220 * 0.15 + 23 * 0.6) / 1e6, 12);
  });
});

// ── Cost budgets and the price table ─────────────────────────────────────────────────────────────────────────

describe("a cost budget over an HTTP provider", () => {
  const toolTurn = (usage: { prompt_tokens: number; completion_tokens: number }, model: string) =>
    chatTurn({
      deltas: [
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              index: 0,
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
            },
          ],
        },
      ],
      finish: "tool_calls",
      usage,
      model,
    });

  it("is enforced for a dated snapshot id, priced as its family", async () => {
    server.reply(toolTurn({ prompt_tokens: 100_000, completion_tokens: 10 }, "gpt-4o-2024-08-06"));
    const keel = await runtimeFor({
      provider: "openai_compatible",
      api_base: `${server.url}/v1`,
      model: "gpt-4o-2024-08-06",
    });
    const result = await keel.runDetailed({
      agentId: "weather",
      inputText: "Weather?",
      budget: { maxCostUsd: 0.1 },
    });
    expect(result.stopReason).toBe("budget_exhausted");
    // 100,000 input × $2.50 + 10 output × $10, per 1M tokens: gpt-4o's rates.
    expect(result.usage.costUsd).toBeCloseTo(0.2501, 9);
    expect(server.requests).toHaveLength(1);
  });

  it("with a model Keel has no price for, says so in an event and a warning naming the model and llm.pricing", async () => {
    const warnings: { message: string; details: Record<string, unknown> | undefined }[] = [];
    const ignore = (): void => {};
    const previous: Logger = setLogger({
      debug: ignore,
      info: ignore,
      warn: (message, details) => void warnings.push({ message, details }),
      error: ignore,
    });
    try {
      server.reply(
        toolTurn({ prompt_tokens: 100, completion_tokens: 10 }, "my-local-llama"),
        chatTurn({
          deltas: [{ role: "assistant", content: "Rainy." }],
          finish: "stop",
          usage: { prompt_tokens: 120, completion_tokens: 2 },
          model: "my-local-llama",
        }),
      );
      const keel = await runtimeFor({
        provider: "openai_compatible",
        api_base: `${server.url}/v1`,
        model: "my-local-llama",
      });
      const chunks = await collect(
        keel.stream({ agentId: "weather", inputText: "Weather?", budget: { maxCostUsd: 0.000001 } }),
      );
      const skipped = chunks.filter((chunk) => chunk.kind === "budget.cost_skipped");
      expect(skipped.map((chunk) => chunk.payload)).toEqual([
        { limit: 0.000001, reason: "cost_unavailable", model: "my-local-llama" },
      ]);
      // Announced before the first model call, not after money was spent.
      const firstCall = chunks.findIndex((chunk) => chunk.kind === "llm.called");
      expect(chunks.indexOf(skipped[0]!)).toBeLessThan(firstCall);
      expect(chunks.at(-1)?.result).toMatchObject({ stopReason: "completed", usage: { costUsd: null } });
      const budgetWarnings = warnings.filter((warning) => warning.message.includes("maxCostUsd"));
      expect(budgetWarnings).toHaveLength(1);
      expect(budgetWarnings[0]!.message).toContain('"my-local-llama"');
      expect(budgetWarnings[0]!.message).toContain("llm.pricing");
      expect(budgetWarnings[0]!.details).toMatchObject({ model: "my-local-llama", limit: 0.000001 });
    } finally {
      setLogger(previous);
    }
  });
});
