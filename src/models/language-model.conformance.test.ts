import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll } from "vitest";
import { v3Stream, v3Usage } from "../../test/support/ai-sdk-mocks.js";
import {
  FakeClock,
  FakeModelServer,
  jsonReply,
  type Reply,
  silentReply,
} from "../../test/support/fake-model-server.js";
import { anthropicTurn, chatTurn } from "../../test/support/provider-replies.js";
import { describeLanguageModelConformance } from "../testing/language-model-conformance.js";
import { fromAiSdk } from "./providers/ai-sdk/ai-sdk-model.js";
import { AnthropicModel } from "./providers/anthropic/anthropic-model.js";
import { EchoModel } from "./providers/mock/echo-model.js";
import { scriptedModel } from "./providers/mock/scripted-model.js";
import { OpenAICompatibleModel } from "./providers/openai/openai-compatible-model.js";

describeLanguageModelConformance("mock (echo)", { text: () => new EchoModel() });

/** The suite's transcript already holds two assistant turns; the scripted model answers with the one after them. */
const EARLIER = [{ text: "Let me look it up." }, { text: "A keel is the spine of a ship." }];

describeLanguageModelConformance("mock (scripted)", {
  text: () =>
    scriptedModel([
      ...EARLIER,
      { deltas: ["A keel ", "keeps a ship upright."], usage: { inputTokens: 40, outputTokens: 6 } },
    ]),
  toolCall: () =>
    scriptedModel([
      ...EARLIER,
      {
        toolCalls: [{ name: "lookup", arguments: { query: "keel" } }],
        usage: { inputTokens: 40, outputTokens: 9 },
      },
    ]),
  error: () => scriptedModel([...EARLIER, { error: { type: "response", message: "bad request" } }]),
  stall: () => scriptedModel([...EARLIER, { delayMs: 3_600_000, text: "too late" }]),
});

/** An AI SDK v3 model that waits for its call's abort signal and fails with its reason. */
function stallingAiSdkModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: ({ abortSignal }) =>
      new Promise((_, reject) => {
        if (abortSignal?.aborted) reject(abortSignal.reason);
        abortSignal?.addEventListener("abort", () => reject(abortSignal.reason), { once: true });
      }),
  });
}

describeLanguageModelConformance("ai_sdk (MockLanguageModelV3)", {
  text: () =>
    fromAiSdk(
      new MockLanguageModelV3({
        doStream: [
          v3Stream([
            { type: "stream-start", warnings: [] },
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "A keel " },
            { type: "text-delta", id: "t", delta: "keeps a ship upright." },
            { type: "text-end", id: "t" },
            {
              type: "finish",
              finishReason: { unified: "stop", raw: "stop" },
              usage: v3Usage({ total: 40 }, { total: 6 }),
            },
          ]),
        ],
      }),
    ),
  toolCall: () =>
    fromAiSdk(
      new MockLanguageModelV3({
        doStream: [
          v3Stream([
            { type: "tool-input-start", id: "call_1", toolName: "lookup" },
            { type: "tool-input-delta", id: "call_1", delta: '{"query": ' },
            { type: "tool-input-delta", id: "call_1", delta: '"keel"}' },
            { type: "tool-input-end", id: "call_1" },
            { type: "tool-call", toolCallId: "call_1", toolName: "lookup", input: '{"query": "keel"}' },
            {
              type: "finish",
              finishReason: { unified: "tool-calls", raw: "tool_calls" },
              usage: v3Usage({ total: 40 }, { total: 9 }),
            },
          ]),
        ],
      }),
    ),
  error: () =>
    fromAiSdk(
      new MockLanguageModelV3({
        doStream: async () => {
          const { APICallError } = await import("@ai-sdk/provider");
          throw new APICallError({
            message: "bad request",
            url: "u",
            requestBodyValues: {},
            statusCode: 400,
          });
        },
      }),
    ),
  stall: () => fromAiSdk(stallingAiSdkModel()),
});

// The HTTP providers against an in-process vendor; each factory queues the answer its scenario needs.
let server: FakeModelServer;
beforeAll(async () => {
  server = await FakeModelServer.start();
});
afterAll(async () => {
  await server.close();
});

function serving<T>(reply: Reply, make: (url: string) => T): T {
  server.reply(reply);
  return make(server.url);
}

const anthropic = (url: string) =>
  new AnthropicModel({
    apiKey: "sk-ant-test",
    modelId: "claude-sonnet-4-6",
    apiBase: url,
    clock: new FakeClock(),
  });
const usage = { input_tokens: 40, output_tokens: 6 };

describeLanguageModelConformance("anthropic (fake server)", {
  text: () =>
    serving(
      anthropicTurn({
        id: "msg_1",
        blocks: [{ type: "text", text: "A keel keeps a ship upright." }],
        stopReason: "end_turn",
        usage,
      }),
      anthropic,
    ),
  toolCall: () =>
    serving(
      anthropicTurn({
        id: "msg_2",
        blocks: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: { query: "keel" } }],
        stopReason: "tool_use",
        usage,
      }),
      anthropic,
    ),
  error: () =>
    serving(
      jsonReply(400, { type: "error", error: { type: "invalid_request_error", message: "bad request" } }),
      anthropic,
    ),
  stall: () => serving(silentReply(), anthropic),
});

const openai = (url: string) =>
  new OpenAICompatibleModel({
    apiBase: `${url}/v1`,
    apiKey: "sk-test",
    modelId: "gpt-4o",
    clock: new FakeClock(),
  });
const chatUsage = { prompt_tokens: 40, completion_tokens: 6 };

describeLanguageModelConformance("openai_compatible (fake server)", {
  text: () =>
    serving(
      chatTurn({
        deltas: [{ role: "assistant", content: "A keel " }, { content: "keeps a ship upright." }],
        finish: "stop",
        usage: chatUsage,
      }),
      openai,
    ),
  toolCall: () =>
    serving(
      chatTurn({
        deltas: [
          {
            role: "assistant",
            tool_calls: [
              {
                index: 0,
                id: "call_1",
                type: "function",
                function: { name: "lookup", arguments: '{"query":' },
              },
            ],
          },
          { tool_calls: [{ index: 0, function: { arguments: '"keel"}' } }] },
        ],
        finish: "tool_calls",
        usage: chatUsage,
      }),
      openai,
    ),
  error: () =>
    serving(jsonReply(400, { error: { type: "invalid_request_error", message: "bad request" } }), openai),
  stall: () => serving(silentReply(), openai),
});
