import { APICallError, InvalidPromptError, LoadAPIKeyError } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { MockLanguageModelV2, streamParts, v2Stream } from "../../../../test/support/ai-sdk-mocks.js";
import { FakeClock } from "../../../../test/support/fake-model-server.js";
import { LLMConnectionError, LLMRateLimitError, LLMResponseError } from "../../../errors/error-classes.js";
import { CancelScope } from "../../../loop/cancel-scope.js";
import { readModelStream } from "../../../loop/read-model-stream.js";
import { classifyAiSdkError, retryAfterFromHeaders } from "./ai-sdk-error.js";
import { fromAiSdk } from "./ai-sdk-model.js";

const NOW = Date.parse("2026-03-01T12:00:00Z");

function apiError(statusCode: number | undefined, responseHeaders?: Record<string, string>) {
  return new APICallError({
    message:
      statusCode === undefined ? "Cannot connect to API: connect ECONNREFUSED" : `status ${statusCode}`,
    url: "https://api.example.com/v1/chat/completions",
    requestBodyValues: {},
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(responseHeaders === undefined ? {} : { responseHeaders }),
    responseBody: '{"error":{"message":"nope"}}',
  });
}

describe("AI SDK errors → typed Keel errors", () => {
  it("429 is a rate limit with retryAfterMs from retry-after-ms, Retry-After seconds or an HTTP date", () => {
    const cases: [Record<string, string> | undefined, number | undefined][] = [
      [{ "retry-after-ms": "1500" }, 1500],
      [{ "Retry-After": "3" }, 3000],
      [{ "retry-after": "Sun, 01 Mar 2026 12:00:07 GMT" }, 7000],
      [{ "retry-after": "Sun, 01 Mar 2026 11:00:00 GMT" }, 0],
      [{ "retry-after": "soon" }, undefined],
      [undefined, undefined],
    ];
    for (const [headers, expected] of cases) {
      const { error, errorType } = classifyAiSdkError(apiError(429, headers), "openai.chat", NOW);
      expect(errorType).toBe("rate_limit");
      expect(error).toBeInstanceOf(LLMRateLimitError);
      expect((error as LLMRateLimitError).retryAfterMs).toBe(expected);
      expect(error.retryable).toBe(true);
      expect(error.message).toBe("openai.chat answered HTTP 429: status 429");
      expect(error.context).toMatchObject({ provider: "openai.chat", status: 429 });
    }
    expect(classifyAiSdkError(apiError(529), "anthropic.messages").error).toBeInstanceOf(LLMRateLimitError);
  });

  it("5xx, 408 and a failed connection are connection errors; other 4xx response errors with a hint", () => {
    for (const status of [500, 502, 503, 504, 408]) {
      const { error, errorType } = classifyAiSdkError(apiError(status), "p");
      expect([error.constructor, errorType, error.retryable]).toEqual([
        LLMConnectionError,
        "connection",
        true,
      ]);
    }
    const network = classifyAiSdkError(apiError(undefined), "p");
    expect(network.error).toBeInstanceOf(LLMConnectionError);
    expect(network.error.message).toBe("p: Cannot connect to API: connect ECONNREFUSED");
    for (const [status, hint] of [
      [400, /refused the request/],
      [401, /API key/],
      [403, /not be allowed/],
      [404, /model id/],
    ] as const) {
      const { error, errorType } = classifyAiSdkError(apiError(status), "p");
      expect(errorType).toBe("response");
      expect(error).toBeInstanceOf(LLMResponseError);
      expect((error as LLMResponseError).status).toBe(status);
      expect(error.retryable).toBe(false);
      expect(error.hint).toMatch(hint);
      expect(error.cause).toBeInstanceOf(APICallError);
    }
  });

  it("the AI SDK's other errors are response errors; a missing API key says where to set it", () => {
    const missingKey = classifyAiSdkError(
      new LoadAPIKeyError({
        message:
          "OpenAI API key is missing. Pass it using the 'apiKey' parameter or the OPENAI_API_KEY environment variable.",
      }),
      "openai.chat",
    );
    expect(missingKey.errorType).toBe("response");
    expect(missingKey.error.message).toMatch(/AI_LoadAPIKeyError.*OPENAI_API_KEY/);
    expect(missingKey.error.hint).toMatch(/API key/);
    const invalid = classifyAiSdkError(new InvalidPromptError({ prompt: [], message: "bad prompt" }), "p");
    expect(invalid.error).toBeInstanceOf(LLMResponseError);
    expect(invalid.error.context.aiSdkError).toBe("AI_InvalidPromptError");
  });

  it("vendor errors sent inside a stream are classified by their type", () => {
    const kinds = [
      { type: "overloaded_error", message: "Overloaded" },
      { error: { type: "rate_limit_error", message: "slow down" } },
      { error: { code: "server_error", message: "boom" } },
      { type: "api_error", message: "internal" },
      { type: "invalid_request_error", message: "bad" },
      { message: "only a message" },
    ].map((error) => classifyAiSdkError(error, "p").errorType);
    expect(kinds).toEqual(["rate_limit", "rate_limit", "connection", "connection", "response", "response"]);
    expect(
      classifyAiSdkError({ type: "overloaded_error", message: "Overloaded" }, "anthropic").error.message,
    ).toBe("anthropic sent an error in its stream (overloaded_error): Overloaded");
  });

  it("network failures and timeouts are connection errors; anything else is unknown, and retryable", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    for (const error of [
      new TypeError("fetch failed", { cause: refused }),
      refused,
      new DOMException("The operation timed out.", "TimeoutError"),
    ]) {
      expect(classifyAiSdkError(error, "p").errorType).toBe("connection");
    }
    const odd = classifyAiSdkError(new RangeError("weird"), "p");
    expect([odd.errorType, odd.error.constructor, odd.error.retryable]).toEqual([
      "unknown",
      LLMConnectionError,
      true,
    ]);
    expect(classifyAiSdkError("just text", "p").error.message).toBe("p: the model call failed: just text");
    expect(classifyAiSdkError(42, "p").error.message).toBe("p: the model call failed: 42");
  });

  it("a Keel error passes through with its type", () => {
    const limit = new LLMRateLimitError("slow", { retryAfterMs: 5 });
    expect(classifyAiSdkError(limit, "p")).toEqual({ error: limit, errorType: "rate_limit" });
    expect(classifyAiSdkError(new LLMResponseError("r"), "p").errorType).toBe("response");
    expect(classifyAiSdkError(new LLMConnectionError("c"), "p").errorType).toBe("connection");
  });

  it("reads retry headers without regard to case", () => {
    expect(retryAfterFromHeaders({ "RETRY-AFTER-MS": "10.2" })).toBe(11);
    expect(retryAfterFromHeaders({})).toBeUndefined();
  });
});

describe("errors through the model", () => {
  it("v3: doStream rejecting with a 429 becomes an error part the loop throws as LLMRateLimitError", async () => {
    const mock = new MockLanguageModelV3({
      provider: "openai.chat",
      doStream: async () => {
        throw apiError(429, { "retry-after": "2" });
      },
    });
    // The default policy retries a rate limit, waiting Retry-After's 2 s each time: on a clock that records
    // the waits instead of spending them.
    const clock = new FakeClock();
    const parts = await streamParts(fromAiSdk(mock, { clock }));
    expect(parts).toEqual([{ type: "error", error: expect.any(LLMRateLimitError), errorType: "rate_limit" }]);
    expect(clock.sleeps).toEqual([2000, 2000]);
    const failure = await readModelStream(
      fromAiSdk(mock, { clock }).stream({ messages: [], options: {} }),
      { onTextDelta: () => {} },
      { scope: new CancelScope(), fallbackModel: "m" },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LLMRateLimitError);
    expect((failure as LLMRateLimitError).retryAfterMs).toBe(2000);
  });

  it("v2: an error part in the stream after some text; v3: a stream that fails while being read", async () => {
    const v2 = new MockLanguageModelV2({
      doStream: [
        v2Stream([
          { type: "text-delta", id: "t", delta: "Hel" },
          { type: "error", error: apiError(503) },
        ]),
      ],
    });
    expect(await streamParts(fromAiSdk(v2))).toEqual([
      { type: "text-delta", text: "Hel" },
      { type: "error", error: expect.any(LLMConnectionError), errorType: "connection" },
    ]);
    let sent = false;
    const broken = new ReadableStream({
      pull(controller) {
        if (sent) controller.error(new TypeError("terminated", { cause: { code: "UND_ERR_SOCKET" } }));
        else controller.enqueue({ type: "text-delta", id: "t", delta: "half" });
        sent = true;
      },
    });
    const v3 = new MockLanguageModelV3({ doStream: { stream: broken } });
    expect(await streamParts(fromAiSdk(v3))).toEqual([
      { type: "text-delta", text: "half" },
      { type: "error", error: expect.any(LLMConnectionError), errorType: "connection" },
    ]);
    const generating = new MockLanguageModelV3({
      doGenerate: async () => {
        throw apiError(400);
      },
    });
    expect(await streamParts(fromAiSdk(generating, { mode: "generate" }))).toEqual([
      { type: "error", error: expect.any(LLMResponseError), errorType: "response" },
    ]);
  });
});
