import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../test/support/fake-model-server.js";
import type { ModelStreamPart } from "../../contracts/language-model.js";
import {
  ConfigError,
  LLMConnectionError,
  LLMRateLimitError,
  LLMResponseError,
} from "../../errors/error-classes.js";
import type { KeelError } from "../../errors/keel-error.js";
import { modelErrorType, retryModelStream } from "./retry-model-stream.js";
import { resolveRetryPolicy } from "./retry-policy.js";

const TEXT: ModelStreamPart = { type: "text-delta", text: "hi" };
const FINISH: ModelStreamPart = { type: "finish", stopReason: "end_turn" };

/** Attempts that fail with the given errors in turn, then succeed. */
function attempts(failures: (KeelError | Error)[], options: { failAfterText?: boolean } = {}) {
  let calls = 0;
  const attempt = async function* (): AsyncGenerator<ModelStreamPart> {
    const failure = failures[calls++];
    if (failure && options.failAfterText) yield TEXT;
    if (failure) throw failure;
    yield TEXT;
    yield FINISH;
  };
  return { attempt, calls: () => calls };
}

async function run(
  failures: (KeelError | Error)[],
  retry: Parameters<typeof resolveRetryPolicy>[0] = {},
  extra: { clock?: FakeClock; signal?: AbortSignal; failAfterText?: boolean } = {},
) {
  const clock = extra.clock ?? new FakeClock();
  const source = attempts(failures, extra);
  const parts: ModelStreamPart[] = [];
  for await (const part of retryModelStream({
    policy: resolveRetryPolicy(retry),
    clock,
    signal: extra.signal,
    provider: "Anthropic",
    attempt: source.attempt,
  })) {
    parts.push(part);
  }
  return { parts, calls: source.calls(), sleeps: clock.sleeps };
}

const status = (code: number) =>
  code === 429 || code === 529
    ? new LLMRateLimitError(`HTTP ${code}`, { context: { status: code } })
    : code >= 500
      ? new LLMConnectionError(`HTTP ${code}`, { context: { status: code } })
      : new LLMResponseError(`HTTP ${code}`, { status: code, context: { status: code } });

describe("retryModelStream", () => {
  it("passes a successful attempt through", async () => {
    expect(await run([])).toEqual({ parts: [TEXT, FINISH], calls: 1, sleeps: [] });
  });

  it("retries 429, every 5xx and 529 with exponential backoff", async () => {
    for (const code of [429, 500, 502, 503, 504, 529]) {
      expect(await run([status(code), status(code)])).toEqual({
        parts: [TEXT, FINISH],
        calls: 3,
        sleeps: [500, 1000],
      });
    }
  });

  it("waits at least Retry-After", async () => {
    const limited = new LLMRateLimitError("slow", { retryAfterMs: 3000 });
    expect((await run([limited])).sleeps).toEqual([3000]);
  });

  it("gives up after max_attempts with the last error as an error part", async () => {
    const { parts, calls, sleeps } = await run([status(503), status(503), status(503)]);
    expect(calls).toBe(3);
    expect(sleeps).toEqual([500, 1000]);
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ type: "error", errorType: "connection" });
    const error = (parts[0] as { error: KeelError }).error;
    expect(error).toBeInstanceOf(LLMConnectionError);
    expect(error.context).toEqual({ status: 503, attempts: 3 });
  });

  it("keeps retryAfterMs on an exhausted rate limit", async () => {
    const limited = () => new LLMRateLimitError("slow", { retryAfterMs: 700 });
    const { parts } = await run([limited(), limited()], { max_attempts: 2 });
    expect(parts[0]).toMatchObject({ type: "error", errorType: "rate_limit" });
    expect(((parts[0] as { error: KeelError }).error as LLMRateLimitError).retryAfterMs).toBe(700);
  });

  it("does not retry 4xx or errors that are not the provider's", async () => {
    for (const failure of [status(400), status(401), status(404), new ConfigError("bad")]) {
      const { parts, calls } = await run([failure]);
      expect(calls).toBe(1);
      expect((parts[0] as { error: unknown }).error).toBe(failure);
    }
    const { parts } = await run([status(400)]);
    expect(parts[0]).toMatchObject({ errorType: "response" });
  });

  it("retries connection failures unless retry_on_connection_errors is false", async () => {
    const dropped = () => new LLMConnectionError("socket hang up");
    expect((await run([dropped()])).calls).toBe(2);
    expect((await run([dropped()], { retry_on_connection_errors: false })).calls).toBe(1);
  });

  it("never retries with max_attempts 1", async () => {
    const { calls, parts } = await run([status(429)], { max_attempts: 1 });
    expect(calls).toBe(1);
    expect(parts[0]).toMatchObject({ type: "error", errorType: "rate_limit" });
  });

  it("starts no attempt that total_budget_ms would not cover", async () => {
    const { calls, sleeps } = await run([status(503), status(503), status(503)], {
      max_attempts: 5,
      total_budget_ms: 1200,
    });
    // 500 ms fits the budget; 500 + 1000 does not.
    expect(calls).toBe(2);
    expect(sleeps).toEqual([500]);
  });

  it("turns a failure after the first part into an error part, without retrying", async () => {
    const { parts, calls } = await run([status(503)], {}, { failAfterText: true });
    expect(calls).toBe(1);
    expect(parts[0]).toEqual(TEXT);
    expect(parts[1]).toMatchObject({ type: "error", errorType: "connection" });
  });

  it("counts an error part like a thrown error", async () => {
    let calls = 0;
    const parts: ModelStreamPart[] = [];
    for await (const part of retryModelStream({
      policy: resolveRetryPolicy({}),
      clock: new FakeClock(),
      provider: "p",
      attempt: async function* () {
        if (calls++ === 0) yield { type: "error", error: status(529), errorType: "rate_limit" };
        else yield FINISH;
      },
    })) {
      parts.push(part);
    }
    expect(calls).toBe(2);
    expect(parts).toEqual([FINISH]);
  });

  it("wraps an unexpected error as a response error", async () => {
    const { parts } = await run([new SyntaxError("Unexpected token")]);
    expect(parts[0]).toMatchObject({ type: "error", errorType: "response" });
    expect((parts[0] as { error: Error }).error.message).toBe(
      "Keel could not read Anthropic's answer: Unexpected token",
    );
  });

  it("rejects with the run's abort reason and does not retry", async () => {
    const controller = new AbortController();
    const reason = new Error("cancelled");
    controller.abort(reason);
    await expect(run([status(503)], {}, { signal: controller.signal })).rejects.toBe(reason);
  });
});

describe("modelErrorType", () => {
  it("maps the typed errors to the error parts' errorType", () => {
    expect(modelErrorType(new LLMRateLimitError("x"))).toBe("rate_limit");
    expect(modelErrorType(new LLMConnectionError("x"))).toBe("connection");
    expect(modelErrorType(new LLMResponseError("x"))).toBe("response");
    expect(modelErrorType(new ConfigError("x"))).toBe("unknown");
  });
});
