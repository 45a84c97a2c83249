import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeClock, FakeModelServer, jsonReply, streamReply } from "../../test/support/fake-model-server.js";
import { llmOptionsSchema } from "../config/app-config-schema.js";
import type { ModelStreamPart } from "../contracts/language-model.js";
import { ConfigError } from "../errors/error-classes.js";
import { createModel } from "./create-model.js";
import { AnthropicModel } from "./providers/anthropic/anthropic-model.js";
import { EchoModel } from "./providers/mock/echo-model.js";
import { OpenAICompatibleModel } from "./providers/openai/openai-compatible-model.js";

const env = { ANTHROPIC_API_KEY: "sk-ant", OPENAI_API_KEY: "sk-oai", MY_KEY: "sk-mine" };
const llm = (options: Record<string, unknown>) => llmOptionsSchema().parse(options);

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

async function drain(parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const collected: ModelStreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

describe("createModel", () => {
  it("keeps the offline mock the default", () => {
    const created = createModel(undefined);
    expect(created.model).toBeInstanceOf(EchoModel);
    expect(created.pricing).toEqual({ input: 0, output: 0, cached_read: 0, cached_write: 0 });
    expect(createModel(llm({})).model).toBeInstanceOf(EchoModel);
  });

  it("makes an anthropic model with the vendor's defaults and the built-in prices", () => {
    const created = createModel(llm({ provider: "anthropic" }), { env });
    expect(created.model).toBeInstanceOf(AnthropicModel);
    expect(created.model.modelId).toBe("claude-3-haiku-20240307");
    const sonnet = createModel(llm({ provider: "anthropic", model: "claude-sonnet-4-6" }), { env });
    expect(sonnet.pricing).toEqual({ input: 3, output: 15, cached_read: 0.3, cached_write: 3.75 });
  });

  it("lets llm.pricing override the built-in prices field by field", () => {
    const created = createModel(
      llm({
        provider: "openai_compatible",
        api_base: "http://localhost:1/v1",
        model: "gpt-4o",
        pricing: { output: 8 },
      }),
      { env },
    );
    expect(created.pricing).toEqual({ input: 2.5, output: 8, cached_read: 1.25 });
  });

  it("makes an openai_compatible model with its API style and reasoning flag", () => {
    const created = createModel(
      llm({
        provider: "openai_compatible",
        api_base: "http://localhost:11434/v1",
        openai_api_style: "responses",
        reasoning_model: true,
        seed: 7,
        top_p: 0.5,
      }),
      { env },
    );
    const model = created.model as OpenAICompatibleModel;
    expect(model).toBeInstanceOf(OpenAICompatibleModel);
    expect(model.modelId).toBe("gpt-4o-mini");
    expect(model.apiStyle).toBe("responses");
    expect(model.isReasoningModel).toBe(true);
    expect(created.options).toEqual({ seed: 7, top_p: 0.5 });
  });

  it("fails at load, before any request, when the key's variable is not set", () => {
    const anthropic = configError(() => createModel(llm({ provider: "anthropic" }), { env: {} }));
    expect(anthropic.message).toBe(
      'llm.provider "anthropic" needs an API key, and the environment variable ANTHROPIC_API_KEY is not set',
    );
    expect(anthropic.hint).toMatch(/^Set ANTHROPIC_API_KEY /);
    const openai = configError(() =>
      createModel(llm({ provider: "openai_compatible", api_base: "http://x/v1" }), { env: {} }),
    );
    expect(openai.hint).toMatch(/^Set OPENAI_API_KEY /);
    const custom = configError(() =>
      createModel(llm({ provider: "anthropic", api_key_env: "TEAM_KEY" }), {
        env: { ANTHROPIC_API_KEY: "x" },
      }),
    );
    expect(custom.hint).toMatch(/^Set TEAM_KEY /);
  });

  it("needs api_base for openai_compatible", () => {
    const error = configError(() => createModel({ provider: "openai_compatible" } as never, { env }));
    expect(error.message).toBe('llm.api_base is required for provider "openai_compatible"');
  });
});

describe("createModel: llm options reach the request", () => {
  let server: FakeModelServer;

  beforeEach(async () => {
    server = await FakeModelServer.start();
  });

  afterEach(async () => {
    await server.close();
  });

  it("anthropic: api_key_env, max_tokens, temperature, extra_headers, retry and pass-through options", async () => {
    const clock = new FakeClock();
    server.reply(
      jsonReply(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
      jsonReply(200, {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-6",
        content: [{ type: "text", text: "hi" }],
        stop_reason: "end_turn",
        usage: { input_tokens: 3, output_tokens: 1 },
      }),
    );
    const { model, options } = createModel(
      llm({
        provider: "anthropic",
        model: "claude-sonnet-4-6",
        api_base: server.url,
        api_key_env: "MY_KEY",
        max_tokens: 99,
        temperature: 0.5,
        extra_headers: { "anthropic-beta": "prompt-caching-2024-07-31" },
        retry: { initial_backoff_ms: 10 },
        top_k: 3,
      }),
      { env, clock },
    );
    const parts = await drain(model.stream({ messages: [{ role: "user", content: "hey" }], options }));
    expect(parts[0]).toEqual({ type: "text-delta", text: "hi" });
    expect(clock.sleeps).toEqual([10]);
    const [request] = server.requests;
    expect(request?.headers["x-api-key"]).toBe("sk-mine");
    expect(request?.headers["anthropic-beta"]).toBe("prompt-caching-2024-07-31");
    expect(request?.body).toEqual({
      model: "claude-sonnet-4-6",
      max_tokens: 99,
      messages: [{ role: "user", content: "hey" }],
      temperature: 0.5,
      top_k: 3,
      stream: true,
    });
  });

  it("openai_compatible: the bearer key from OPENAI_API_KEY and the stream endpoint", async () => {
    server.reply(
      streamReply(
        'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
      ),
    );
    const { model, options } = createModel(
      llm({
        provider: "openai_compatible",
        api_base: "http://unused.invalid/v1",
        stream_endpoint: `${server.url}/custom/chat`,
        model: "llama3.1",
      }),
      { env },
    );
    const parts = await drain(model.stream({ messages: [{ role: "user", content: "hey" }], options }));
    expect(parts).toEqual([
      { type: "text-delta", text: "ok" },
      { type: "finish", stopReason: "end_turn" },
    ]);
    expect(server.requests[0]?.path).toBe("/custom/chat");
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-oai");
  });
});
