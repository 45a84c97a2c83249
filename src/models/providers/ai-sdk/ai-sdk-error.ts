import type { ModelErrorType } from "../../../contracts/language-model.js";
import { LLMConnectionError, LLMRateLimitError, LLMResponseError } from "../../../errors/error-classes.js";
import { ERROR_CODES } from "../../../errors/error-codes.js";
import { KeelError } from "../../../errors/keel-error.js";

/** A typed Keel error and the `errorType` of the stream part that carries it. */
export interface ClassifiedError {
  error: KeelError;
  errorType: ModelErrorType;
}

/**
 * The typed Keel error for anything an AI SDK model threw or sent as an `error` stream part:
 * - an `APICallError` with status 429 (or Anthropic's 529) is an `LLMRateLimitError` whose `retryAfterMs`
 *   comes from the response's `retry-after-ms` / `Retry-After` headers; 408 and 5xx, and one without a status
 *   (the AI SDK's "Cannot connect to API"), are `LLMConnectionError`s; any other status an `LLMResponseError`;
 * - a vendor error object sent inside a stream (`{ type: "overloaded_error", message }`) is classified by its
 *   type, as the HTTP providers classify theirs;
 * - network failures and timeouts are `LLMConnectionError`s; the AI SDK's other errors (invalid prompt,
 *   unsupported functionality, missing API key…) are `LLMResponseError`s, which are not retried.
 * Identified by the AI SDK's error markers, so nothing of `@ai-sdk/provider` is loaded at run time.
 */
export function classifyAiSdkError(
  error: unknown,
  provider: string,
  nowMs: number = Date.now(),
): ClassifiedError {
  if (KeelError.isInstance(error)) return { error, errorType: errorTypeOf(error) };
  if (hasAiSdkMarker(error, "AI_APICallError"))
    return fromApiCallError(error as ApiCallErrorLike, provider, nowMs);
  if (hasAiSdkMarker(error)) {
    const aiError = error as Error;
    const name = aiError.name || "AI SDK error";
    return {
      error: new LLMResponseError(`${provider} (AI SDK ${name}): ${aiError.message}`, {
        cause: error,
        context: { provider, aiSdkError: name },
        hint:
          name === "AI_LoadAPIKeyError"
            ? "Set the API key the AI SDK provider reads (its message names the variable), or pass apiKey to the provider"
            : "The AI SDK refused the call; its message above says why",
      }),
      errorType: "response",
    };
  }
  if (isNetworkError(error)) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      error: new LLMConnectionError(`${provider}: the request failed: ${message}`, {
        cause: error,
        context: { provider },
        hint: "Check the network and the provider's base URL; the call can be retried",
      }),
      errorType: "connection",
    };
  }
  const vendor = vendorError(error);
  if (vendor !== null) return fromVendorError(vendor, provider, error);
  const message =
    error instanceof Error ? error.message : typeof error === "string" ? error : safeJson(error);
  return {
    error: new LLMConnectionError(`${provider}: the model call failed: ${message}`, {
      cause: error,
      context: { provider },
    }),
    errorType: "unknown",
  };
}

interface ApiCallErrorLike extends Error {
  url?: string;
  statusCode?: number;
  responseHeaders?: Record<string, string>;
  responseBody?: string;
}

function fromApiCallError(error: ApiCallErrorLike, provider: string, nowMs: number): ClassifiedError {
  const status = error.statusCode;
  const context: Record<string, unknown> = { provider };
  if (error.url) context.url = error.url;
  if (status === undefined) {
    return {
      error: new LLMConnectionError(`${provider}: ${error.message}`, {
        cause: error,
        context,
        hint: "Check the network and the provider's base URL; the call can be retried",
      }),
      errorType: "connection",
    };
  }
  context.status = status;
  const message = `${provider} answered HTTP ${status}: ${error.message}`;
  if (status === 429 || status === 529) {
    const retryAfterMs = retryAfterFromHeaders(error.responseHeaders, nowMs);
    return {
      error: new LLMRateLimitError(message, {
        cause: error,
        context,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        hint:
          status === 529
            ? "The provider is overloaded; try again later"
            : "Slow down or try again later (the provider's Retry-After says when)",
      }),
      errorType: "rate_limit",
    };
  }
  if (status === 408 || status >= 500) {
    return {
      error: new LLMConnectionError(message, {
        cause: error,
        context,
        hint: "The provider failed on its side; try again later",
      }),
      errorType: "connection",
    };
  }
  return {
    error: new LLMResponseError(message, { cause: error, status, context, hint: responseHint(status) }),
    errorType: "response",
  };
}

function responseHint(status: number): string {
  switch (status) {
    case 401:
      return "Check the API key the AI SDK provider was created with";
    case 403:
      return "The API key may not be allowed to use this model or endpoint";
    case 404:
      return "Check the model id and the provider's base URL";
    default:
      return "The provider refused the request; its message above says which part";
  }
}

/**
 * How long the server asked to wait, in ms: `retry-after-ms` (OpenAI), else `Retry-After` as seconds or an
 * HTTP date. Header names are matched without regard to case. Undefined when absent or unreadable.
 */
export function retryAfterFromHeaders(
  headers: Record<string, string> | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  if (headers === undefined) return undefined;
  let milliseconds: string | undefined;
  let retryAfter: string | undefined;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === "retry-after-ms") milliseconds = value;
    else if (lower === "retry-after") retryAfter = value;
  }
  if (milliseconds !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(milliseconds))
    return Math.ceil(Number(milliseconds));
  const value = retryAfter?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

interface VendorError {
  type: string;
  message: string | undefined;
}

/** `{type, message}` or `{error: {type | code, message}}`, the shapes providers put in stream error parts. */
function vendorError(error: unknown): VendorError | null {
  if (typeof error !== "object" || error === null || error instanceof Error) return null;
  let record = error as Record<string, unknown>;
  if (typeof record.error === "object" && record.error !== null)
    record = record.error as Record<string, unknown>;
  const type =
    typeof record.type === "string" ? record.type : typeof record.code === "string" ? record.code : null;
  const message = typeof record.message === "string" ? record.message : undefined;
  if (type === null && message === undefined) return null;
  return { type: type ?? "error", message };
}

function fromVendorError(vendor: VendorError, provider: string, cause: unknown): ClassifiedError {
  const message = `${provider} sent an error in its stream (${vendor.type}): ${vendor.message ?? "no message"}`;
  const context = { provider, vendorErrorType: vendor.type };
  if (/overloaded|rate_limit|too_many_requests/.test(vendor.type)) {
    return {
      error: new LLMRateLimitError(message, { cause, context, hint: "Try again later" }),
      errorType: "rate_limit",
    };
  }
  if (/api_error|server_error|internal|timeout|unavailable/.test(vendor.type)) {
    return {
      error: new LLMConnectionError(message, {
        cause,
        context,
        hint: "The provider failed on its side; try again later",
      }),
      errorType: "connection",
    };
  }
  return { error: new LLMResponseError(message, { cause, context }), errorType: "response" };
}

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

function isNetworkError(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; depth++) {
    if (current.name === "TimeoutError" || current.name === "AbortError") return true;
    if (current instanceof TypeError && /fetch failed|failed to fetch|terminated/i.test(current.message))
      return true;
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The AI SDK marks its errors with `Symbol.for("vercel.ai.error")` and one symbol per class. */
function hasAiSdkMarker(error: unknown, name?: string): boolean {
  if (typeof error !== "object" || error === null) return false;
  const symbol = Symbol.for(name === undefined ? "vercel.ai.error" : `vercel.ai.error.${name}`);
  return (error as Record<symbol, unknown>)[symbol] === true;
}

function errorTypeOf(error: KeelError): ModelErrorType {
  switch (error.code) {
    case ERROR_CODES.LLM_RATE_LIMIT:
      return "rate_limit";
    case ERROR_CODES.LLM_CONNECTION:
      return "connection";
    case ERROR_CODES.LLM_RESPONSE:
      return "response";
    default:
      return "unknown";
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
