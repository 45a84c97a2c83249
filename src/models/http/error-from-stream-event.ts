import { LLMConnectionError, LLMRateLimitError, LLMResponseError } from "../../errors/error-classes.js";
import type { KeelError } from "../../errors/keel-error.js";

/**
 * The typed error for an error the provider sent inside a 200 stream: an overload or rate limit is a rate
 * limit (Anthropic's `overloaded_error` is its HTTP 529), a server error a connection error, anything else a
 * response error.
 */
export function errorFromStreamEvent(event: {
  provider: string;
  type?: string;
  message?: string;
}): KeelError {
  const type = event.type ?? "error";
  const message = `${event.provider} sent an error in its stream (${type}): ${event.message ?? "no message"}`;
  const context = { provider: event.provider, vendorErrorType: type };
  if (/overloaded|rate_limit/.test(type)) {
    return new LLMRateLimitError(message, {
      context,
      hint: "Try again later, or raise llm.retry.max_attempts",
    });
  }
  if (/api_error|server_error|internal|timeout/.test(type)) {
    return new LLMConnectionError(message, {
      context,
      hint: "The provider failed on its side; try again later",
    });
  }
  return new LLMResponseError(message, { context });
}
