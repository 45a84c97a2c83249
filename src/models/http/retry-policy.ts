import type { LLMRetryOptions } from "../../config/app-config-schema.js";

/** How an HTTP provider retries a failed model call. */
export interface RetryPolicy {
  /** Attempts in all, the first included; 1 disables retries. */
  maxAttempts: number;
  initialBackoffMs: number;
  backoffMultiplier: number;
  maxBackoffMs: number;
  /** Retry connection failures and timeouts (statuses 429 and 5xx are always retried). */
  retryOnConnectionErrors: boolean;
  /** No new attempt starts once this much time has passed since the first; null for no limit. */
  totalBudgetMs: number | null;
  /** Random extra wait, as a fraction of the backoff (0.1: up to 10 % more); 0 for the exact formula. */
  jitter: number;
}

/** The policy from `llm.retry` (snake_case, any field optional); Keel's defaults fill the rest. */
export function resolveRetryPolicy(options: Partial<LLMRetryOptions> | undefined): RetryPolicy {
  return {
    maxAttempts: Math.max(1, options?.max_attempts ?? 3),
    initialBackoffMs: options?.initial_backoff_ms ?? 500,
    backoffMultiplier: Math.max(1, options?.backoff_multiplier ?? 2),
    maxBackoffMs: options?.max_backoff_ms ?? 5000,
    retryOnConnectionErrors: options?.retry_on_connection_errors ?? true,
    totalBudgetMs: options?.total_budget_ms ?? null,
    jitter: 0.1,
  };
}

/** The attempt that just failed, as {@link retryDelayMs} weighs it. */
export interface FailedAttempt {
  /** The number of the attempt that failed, 1 for the first. */
  attempt: number;
  /** The server's `Retry-After`, when it sent one. */
  retryAfterMs?: number | undefined;
  /** A draw in [0, 1) that scales the jitter. */
  random: number;
}

/**
 * The wait before attempt `attempt + 1`: `min(initial × multiplier^(n−1) × (1 + jitter × random), max)`,
 * raised to the server's `Retry-After` when that is longer (it is a floor, even above the cap).
 */
export function retryDelayMs(policy: RetryPolicy, { attempt, retryAfterMs, random }: FailedAttempt): number {
  const exponential = policy.initialBackoffMs * policy.backoffMultiplier ** (attempt - 1);
  const backoff = Math.min(exponential * (1 + policy.jitter * random), policy.maxBackoffMs);
  return Math.round(Math.max(backoff, retryAfterMs ?? 0));
}
