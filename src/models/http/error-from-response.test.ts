import { describe, expect, it } from "vitest";
import { LLMConnectionError, LLMRateLimitError, LLMResponseError } from "../../errors/error-classes.js";
import { errorFromResponse, vendorError } from "./error-from-response.js";
import { errorFromStreamEvent } from "./error-from-stream-event.js";

const NOW = Date.parse("2026-01-01T00:00:00Z");

function failed(status: number, body: unknown, headers: Record<string, string> = {}) {
  return errorFromResponse({
    provider: "Anthropic",
    status,
    headers: new Headers(headers),
    bodyText: typeof body === "string" ? body : JSON.stringify(body),
    keyVariable: "ANTHROPIC_API_KEY",
    url: "https://api.anthropic.com/v1/messages",
    nowMs: NOW,
  });
}

const anthropicBody = (type: string, message: string) => ({ type: "error", error: { type, message } });

describe("errorFromResponse", () => {
  it("makes 429 a rate limit with Retry-After in ms", () => {
    const error = failed(429, anthropicBody("rate_limit_error", "Too many"), { "retry-after": "12" });
    expect(error).toBeInstanceOf(LLMRateLimitError);
    expect((error as LLMRateLimitError).retryAfterMs).toBe(12_000);
    expect(error.message).toBe("Anthropic answered HTTP 429 (rate_limit_error): Too many");
    expect(error.retryable).toBe(true);
    expect(error.context).toEqual({
      provider: "Anthropic",
      status: 429,
      vendorErrorType: "rate_limit_error",
      retryAfterMs: 12_000,
    });
  });

  it("makes Anthropic's 529 a rate limit", () => {
    const error = failed(529, anthropicBody("overloaded_error", "Overloaded"));
    expect(error).toBeInstanceOf(LLMRateLimitError);
    expect((error as LLMRateLimitError).retryAfterMs).toBeUndefined();
    expect(error.hint).toMatch(/overloaded/);
  });

  it("makes 5xx a connection error", () => {
    for (const status of [500, 502, 503, 504]) {
      const error = failed(status, anthropicBody("api_error", "Internal"));
      expect(error).toBeInstanceOf(LLMConnectionError);
      expect(error.context.status).toBe(status);
    }
  });

  it("makes 4xx a response error with the vendor's message and status", () => {
    const error = failed(400, anthropicBody("invalid_request_error", "max_tokens: Field required"));
    expect(error).toBeInstanceOf(LLMResponseError);
    expect((error as LLMResponseError).status).toBe(400);
    expect(error.message).toBe(
      "Anthropic answered HTTP 400 (invalid_request_error): max_tokens: Field required",
    );
    expect(error.retryable).toBe(false);
  });

  it("names the key's variable in the hint of a 401 and 403, and the URL for a 404", () => {
    expect(failed(401, anthropicBody("authentication_error", "invalid x-api-key")).hint).toBe(
      "Check the API key in the environment variable ANTHROPIC_API_KEY (llm.api_key_env names another)",
    );
    expect(failed(403, anthropicBody("permission_error", "no")).hint).toMatch(/ANTHROPIC_API_KEY/);
    expect(failed(404, anthropicBody("not_found_error", "model: x")).hint).toBe(
      "Check llm.model and llm.api_base (the request went to https://api.anthropic.com/v1/messages)",
    );
    expect(failed(422, { detail: "bad" }).message).toBe("Anthropic answered HTTP 422: bad");
  });

  it("falls back to the body's text, or says there was none", () => {
    expect(failed(400, "<html>Bad Request</html>").message).toBe(
      "Anthropic answered HTTP 400: <html>Bad Request</html>",
    );
    expect(failed(502, "").message).toBe("Anthropic answered HTTP 502: (no body)");
  });
});

describe("vendorError", () => {
  it("reads the vendors' error shapes", () => {
    expect(vendorError(JSON.stringify(anthropicBody("x", "m")))).toEqual({ type: "x", message: "m" });
    expect(
      vendorError(JSON.stringify({ error: { message: "m", type: null, code: "model_not_found" } })),
    ).toEqual({ type: "model_not_found", message: "m" });
    expect(vendorError(JSON.stringify({ error: "model 'x' not found" }))).toEqual({
      message: "model 'x' not found",
    });
    expect(vendorError(JSON.stringify({ message: "m" }))).toEqual({ message: "m" });
    expect(vendorError(JSON.stringify({ other: 1 }))).toEqual({});
    expect(vendorError("[1]")).toEqual({});
    expect(vendorError("null")).toEqual({});
    expect(vendorError("not json")).toEqual({});
  });
});

describe("errorFromStreamEvent", () => {
  it("types in-stream errors like their statuses", () => {
    const overloaded = errorFromStreamEvent({
      provider: "Anthropic",
      type: "overloaded_error",
      message: "Overloaded",
    });
    expect(overloaded).toBeInstanceOf(LLMRateLimitError);
    expect(overloaded.message).toBe("Anthropic sent an error in its stream (overloaded_error): Overloaded");
    expect(errorFromStreamEvent({ provider: "p", type: "api_error" })).toBeInstanceOf(LLMConnectionError);
    const other = errorFromStreamEvent({ provider: "p" });
    expect(other).toBeInstanceOf(LLMResponseError);
    expect(other.message).toBe("p sent an error in its stream (error): no message");
  });
});
