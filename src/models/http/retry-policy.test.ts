import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "./parse-retry-after.js";
import { resolveRetryPolicy, retryDelayMs } from "./retry-policy.js";

describe("resolveRetryPolicy", () => {
  it("has Keel's defaults", () => {
    expect(resolveRetryPolicy(undefined)).toEqual({
      maxAttempts: 3,
      initialBackoffMs: 500,
      backoffMultiplier: 2,
      maxBackoffMs: 5000,
      retryOnConnectionErrors: true,
      totalBudgetMs: null,
      jitter: 0.1,
    });
  });

  it("takes llm.retry's snake_case fields", () => {
    expect(
      resolveRetryPolicy({
        max_attempts: 1,
        initial_backoff_ms: 100,
        backoff_multiplier: 3,
        max_backoff_ms: 800,
        retry_on_connection_errors: false,
        total_budget_ms: 2000,
      }),
    ).toMatchObject({
      maxAttempts: 1,
      initialBackoffMs: 100,
      backoffMultiplier: 3,
      maxBackoffMs: 800,
      retryOnConnectionErrors: false,
      totalBudgetMs: 2000,
    });
  });
});

describe("retryDelayMs", () => {
  const policy = resolveRetryPolicy(undefined);

  it("is min(initial × multiplier^(n−1), max) without jitter: 500, 1000, 2000, 4000, 5000", () => {
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelayMs(policy, { attempt, random: 0 }))).toEqual([
      500, 1000, 2000, 4000, 5000,
    ]);
  });

  it("adds at most 10 % of jitter and never passes the cap", () => {
    expect(retryDelayMs(policy, { attempt: 1, random: 0.999 })).toBe(550);
    expect(retryDelayMs(policy, { attempt: 4, random: 0.999 })).toBe(4400);
    expect(retryDelayMs(policy, { attempt: 5, random: 0.999 })).toBe(5000);
    expect(retryDelayMs({ ...policy, jitter: 0 }, { attempt: 1, random: 0.999 })).toBe(500);
  });

  it("takes Retry-After as a floor, even above the cap", () => {
    expect(retryDelayMs(policy, { attempt: 1, retryAfterMs: 3000, random: 0 })).toBe(3000);
    expect(retryDelayMs(policy, { attempt: 1, retryAfterMs: 200, random: 0 })).toBe(500);
    expect(retryDelayMs(policy, { attempt: 1, retryAfterMs: 12_000, random: 0 })).toBe(12_000);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  const headers = (entries: Record<string, string>) => new Headers(entries);

  it("reads seconds, fractions and HTTP dates", () => {
    expect(parseRetryAfter(headers({ "retry-after": "3" }), now)).toBe(3000);
    expect(parseRetryAfter(headers({ "retry-after": "0.5" }), now)).toBe(500);
    expect(parseRetryAfter(headers({ "retry-after": "Thu, 01 Jan 2026 00:00:07 GMT" }), now)).toBe(7000);
    expect(parseRetryAfter(headers({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }), now)).toBe(0);
  });

  it("prefers retry-after-ms and ignores what it cannot read", () => {
    expect(parseRetryAfter(headers({ "retry-after-ms": "1250", "retry-after": "9" }), now)).toBe(1250);
    expect(parseRetryAfter(headers({ "retry-after-ms": "soon", "retry-after": "2" }), now)).toBe(2000);
    expect(parseRetryAfter(headers({ "retry-after": "later" }), now)).toBeUndefined();
    expect(parseRetryAfter(headers({ "retry-after": " " }), now)).toBeUndefined();
    expect(parseRetryAfter(headers({}), now)).toBeUndefined();
  });
});
