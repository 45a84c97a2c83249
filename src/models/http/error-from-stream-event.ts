import { LLMConnectionError, LLMRateLimitError, LLMResponseError } from "../../errors/error-classes.js";
import type { KeelError } from "../../errors/keel-error.js";

export interface VendorErrorEvent {
  provider: string;
  type?: string | undefined;
  message?: string | undefined;
  /** False for an error inside a whole 200 answer (a failed Responses API response) rather than a stream. */
  inStream?: boolean;
}

/**
 * The typed error for an error the provider sent inside a 200 answer: an overload or rate limit is a rate
 * limit (Anthropic's `overloaded_error` is its HTTP 529), a server error a connection error, anything else a
 * response error.
 */
export function errorFromStreamEvent(event: VendorErrorEvent): KeelError {
  const type = event.type ?? "error";
  const where = event.inStream === false ? "reported an error" : "sent an error in its stream";
  const message = `${event.provider} ${where} (${type}): ${event.message ?? "no message"}`;
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
