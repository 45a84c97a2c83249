import { LLMConnectionError, LLMRateLimitError, LLMResponseError } from "../../errors/error-classes.js";
import type { KeelError } from "../../errors/keel-error.js";
import { redactSecrets } from "../../logging/redact-secrets.js";
import { parseRetryAfter } from "./parse-retry-after.js";

export interface FailedResponse {
  /** The provider's name in messages: "Anthropic", "OpenAI-compatible server". */
  provider: string;
  status: number;
  headers: Headers;
  bodyText: string;
  /** The environment variable the API key came from, named in the hint of a 401 or 403. */
  keyVariable?: string;
  url: string;
  nowMs: number;
}

/**
 * The typed error for a non-2xx answer: 429 and Anthropic's 529 are rate limits (with `retryAfterMs`
 * from `Retry-After`), 5xx a connection error (the server failed, not the request), any other status a
 * response error with the vendor's own message.
 */
export function errorFromResponse(response: FailedResponse): KeelError {
  const { status, provider } = response;
  // Some gateways echo the API key in their error body: redact before cutting, so no piece of a key survives.
  const bodyText = redactSecrets(response.bodyText);
  const vendor = vendorError(bodyText);
  const detail = vendor.message || bodyText.trim().slice(0, 500) || "(no body)";
  const message = `${provider} answered HTTP ${status}${vendor.type ? ` (${vendor.type})` : ""}: ${detail}`;
  const context: Record<string, unknown> = { provider, status };
  if (vendor.type) context.vendorErrorType = vendor.type;
  if (status === 429 || status === 529) {
    const retryAfterMs = parseRetryAfter(response.headers, response.nowMs);
    return new LLMRateLimitError(message, {
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      context,
      hint:
        status === 529
          ? "The provider is overloaded; try again later or raise llm.retry.max_attempts"
          : "Slow down, try again later, or raise llm.retry.max_attempts",
    });
  }
  if (status >= 500) {
    return new LLMConnectionError(message, {
      context,
      hint: "The provider failed on its side; try again later",
    });
  }
  return new LLMResponseError(message, { status, context, hint: responseHint(response) });
}

function responseHint(response: FailedResponse): string {
  const variable = response.keyVariable;
  switch (response.status) {
    case 401:
      return variable
        ? `Check the API key in the environment variable ${variable} (llm.api_key_env names another)`
        : "Check the API key";
    case 403:
      return variable
        ? `The API key in ${variable} may not be allowed to use this model or endpoint`
        : "The API key may not be allowed to use this model or endpoint";
    case 404:
      return `Check llm.model and llm.api_base (the request went to ${response.url})`;
    default:
      return "The provider refused the request; its message above says which part";
  }
}

/** The `type` and `message` of a vendor's error body (`{error: {type, message}}` and the common variants). */
export function vendorError(bodyText: string): { type?: string; message?: string } {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return {};
  }
  if (typeof body !== "object" || body === null) return {};
  const record = body as Record<string, unknown>;
  const error = record.error;
  if (typeof error === "string") return { message: error };
  if (typeof error === "object" && error !== null) {
    const inner = error as Record<string, unknown>;
    const result: { type?: string; message?: string } = {};
    const type = typeof inner.type === "string" ? inner.type : inner.code;
    if (typeof type === "string") result.type = type;
    if (typeof inner.message === "string") result.message = inner.message;
    return result;
  }
  if (typeof record.message === "string") return { message: record.message };
  if (typeof record.detail === "string") return { message: record.detail };
  return {};
}
