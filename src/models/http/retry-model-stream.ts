import type { ModelErrorType, ModelStreamPart } from "../../contracts/language-model.js";
import { LLMConnectionError, LLMRateLimitError, LLMResponseError } from "../../errors/error-classes.js";
import { KeelError } from "../../errors/keel-error.js";
import type { ModelClock } from "./model-clock.js";
import { type RetryPolicy, retryDelayMs } from "./retry-policy.js";

export interface RetryModelStreamOptions {
  policy: RetryPolicy;
  clock: ModelClock;
  signal?: AbortSignal | undefined;
  provider: string;
  /** One attempt of the call; it throws typed errors (an `error` part counts as thrown). */
  attempt: (attempt: number) => AsyncIterable<ModelStreamPart>;
}

/**
 * Whether a failure with this status is worth another attempt: a rate limit (429, Anthropic's 529) or any server
 * error (5xx): any of them may pass by the next attempt, and the vendors' own SDKs retry every 5xx. Other 4xx
 * are final.
 */
function isRetriedStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * Run a model call with the `llm.retry` policy, as one stream. A failure before the first part reaches the
 * caller is retried when the policy allows it (rate limits, 5xx, connection failures and timeouts) after
 * `min(initial × multiplier^(n−1), max)` — raised to `Retry-After` — unless `total_budget_ms` would be
 * spent; after the first part, or once retries are exhausted, it becomes an `error` part with its `errorType`
 * and `context.attempts`. An abort of the run's signal rejects with its reason and is never retried.
 */
export async function* retryModelStream(options: RetryModelStreamOptions): AsyncGenerator<ModelStreamPart> {
  const { policy, clock, signal } = options;
  const startedAt = clock.now();
  for (let attempt = 1; ; attempt++) {
    let yielded = false;
    try {
      for await (const part of options.attempt(attempt)) {
        if (part.type === "error") throw part.error;
        yielded = true;
        yield part;
      }
      return;
    } catch (thrown) {
      if (signal?.aborted) throw signal.reason;
      const error = asModelError(thrown, options.provider);
      if (!yielded && attempt < policy.maxAttempts && isRetried(error, policy)) {
        const retryAfterMs = error instanceof LLMRateLimitError ? error.retryAfterMs : undefined;
        const wait = retryDelayMs(policy, { attempt, retryAfterMs, random: clock.random() });
        const budget = policy.totalBudgetMs;
        if (budget === null || clock.now() - startedAt + wait < budget) {
          await clock.sleep(wait, signal);
          continue;
        }
      }
      error.context.attempts = attempt;
      yield { type: "error", error, errorType: modelErrorType(error) };
      return;
    }
  }
}

function isRetried(error: KeelError, policy: RetryPolicy): boolean {
  if (error instanceof LLMRateLimitError) return true;
  if (!(error instanceof LLMConnectionError)) return false;
  const status = error.context.status;
  if (typeof status === "number") return isRetriedStatus(status);
  return policy.retryOnConnectionErrors;
}

/** The `errorType` of an error part. */
export function modelErrorType(error: unknown): ModelErrorType {
  if (error instanceof LLMRateLimitError) return "rate_limit";
  if (error instanceof LLMConnectionError) return "connection";
  if (error instanceof LLMResponseError) return "response";
  return "unknown";
}

function asModelError(error: unknown, provider: string): KeelError {
  if (KeelError.isInstance(error)) return error;
  return new LLMResponseError(
    `Keel could not read ${provider}'s answer: ${error instanceof Error ? error.message : String(error)}`,
    { cause: error, context: { provider } },
  );
}
