import { afterEach, describe, expect, it, vi } from "vitest";
import {
  DEFAULT_EXECUTION_SPEC,
  type Tool,
  type ToolContext,
  type ToolExecutionRequest,
  type ToolExecutionResult,
  type ToolExecutor,
} from "../../contracts/tool.js";
import {
  LLMRateLimitError,
  ToolError,
  ToolRateLimitError,
  ToolTimeoutError,
  ToolUnavailableError,
  ToolValidationError,
} from "../../errors/error-classes.js";
import { CancelScope } from "../../loop/cancel-scope.js";
import {
  RetryToolExecutor,
  type RetryToolExecutorOptions,
  retryToolExecutorConfigSchema,
} from "./retry-tool-executor.js";

interface TestRequest extends ToolExecutionRequest {
  readonly scope: CancelScope;
}

function makeRequest(scope = new CancelScope()): TestRequest {
  const tool: Tool = {
    name: "flaky",
    description: "d",
    schema: () => ({}),
    executionSpec: () => DEFAULT_EXECUTION_SPEC,
    invoke: () => null,
  };
  let controller: AbortController | null = null;
  return {
    toolId: "flaky",
    tool,
    params: {},
    context: {} as ToolContext,
    executionSpec: DEFAULT_EXECUTION_SPEC,
    metadata: {},
    scope,
    get signal() {
      controller ??= new AbortController();
      return controller.signal;
    },
    abort(reason: unknown) {
      controller?.abort(reason);
    },
    get cancelled() {
      return scope.cancelled;
    },
    onCancel: (callback) => scope.onCancel(callback),
  };
}

function failed(exception: unknown): ToolExecutionResult {
  return {
    toolId: "flaky",
    success: false,
    error: (exception as Error).message,
    exception,
    metadata: { timeoutMs: 1000 },
  };
}

const ok = (data: unknown): ToolExecutionResult => ({
  toolId: "flaky",
  success: true,
  data,
  metadata: { timeoutMs: 1000 },
});

/** An inner executor answering with these results in turn (the last one repeats). */
function scriptedInner(results: ToolExecutionResult[]) {
  let calls = 0;
  const inner: ToolExecutor & { calls: () => number } = {
    execute: vi.fn(async () => results[Math.min(calls++, results.length - 1)]!),
    calls: () => calls,
  };
  return inner;
}

function makeExecutor(inner: ToolExecutor, overrides: Partial<RetryToolExecutorOptions> = {}) {
  const sleeps: number[] = [];
  const sleep = vi.fn(async (ms: number) => {
    sleeps.push(ms);
    return true;
  });
  const executor = new RetryToolExecutor({
    inner,
    max_attempts: 3,
    initial_delay_ms: 100,
    backoff_multiplier: 2,
    max_delay_ms: 5000,
    jitter: "none",
    sleep,
    ...overrides,
  });
  return { executor, sleeps, sleep };
}

describe("RetryToolExecutor", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("has the documented config defaults", () => {
    expect(retryToolExecutorConfigSchema().parse({})).toEqual({
      inner: { type: "safe" },
      max_attempts: 3,
      initial_delay_ms: 200,
      backoff_multiplier: 2,
      max_delay_ms: 5000,
      jitter: "equal",
    });
    expect(retryToolExecutorConfigSchema().safeParse({ max_attempts: 0 }).success).toBe(false);
    expect(retryToolExecutorConfigSchema().safeParse({ backoff_multiplier: 0.5 }).success).toBe(false);
    expect(retryToolExecutorConfigSchema().safeParse({ jitter: "random" }).success).toBe(false);
  });

  it("returns a first success without retrying", async () => {
    const inner = scriptedInner([ok(1)]);
    const { executor, sleep } = makeExecutor(inner);
    const result = await executor.execute(makeRequest());
    expect(result).toEqual({
      toolId: "flaky",
      success: true,
      data: 1,
      metadata: { timeoutMs: 1000, retryAttempts: 1 },
    });
    expect(sleep).not.toHaveBeenCalled();
  });

  it("retries retryable errors until one succeeds, recording attempts, delays and reasons", async () => {
    const inner = scriptedInner([
      failed(new ToolUnavailableError("down")),
      failed(new ToolTimeoutError("slow", { timeoutMs: 10 })),
      ok("third time"),
    ]);
    const { executor, sleeps } = makeExecutor(inner);
    const request = makeRequest();
    const result = await executor.execute(request);
    expect(inner.calls()).toBe(3);
    expect(inner.execute).toHaveBeenCalledWith(request);
    expect(sleeps).toEqual([100, 200]);
    expect(result).toEqual({
      toolId: "flaky",
      success: true,
      data: "third time",
      metadata: {
        timeoutMs: 1000,
        retryAttempts: 3,
        retryDelaysMs: [100, 200],
        retryReasons: ["ToolUnavailableError", "ToolTimeoutError"],
      },
    });
  });

  it("stops after max_attempts and returns the last failure", async () => {
    const last = new ToolRateLimitError("third");
    const inner = scriptedInner([
      failed(new ToolRateLimitError("first")),
      failed(new ToolRateLimitError("second")),
      failed(last),
      ok("never"),
    ]);
    const { executor, sleeps } = makeExecutor(inner);
    const result = await executor.execute(makeRequest());
    expect(inner.calls()).toBe(3);
    expect(sleeps).toEqual([100, 200]);
    expect(result.success).toBe(false);
    expect(result.exception).toBe(last);
    expect(result.error).toBe("third");
    expect(result.metadata).toEqual({
      timeoutMs: 1000,
      retryAttempts: 3,
      retryDelaysMs: [100, 200],
      retryReasons: ["ToolRateLimitError", "ToolRateLimitError"],
    });
  });

  it("does not retry with max_attempts 1", async () => {
    const inner = scriptedInner([failed(new ToolUnavailableError("down")), ok(1)]);
    const { executor, sleep } = makeExecutor(inner, { max_attempts: 1 });
    const result = await executor.execute(makeRequest());
    expect(inner.calls()).toBe(1);
    expect(sleep).not.toHaveBeenCalled();
    expect(result.metadata).toEqual({ timeoutMs: 1000, retryAttempts: 1 });
  });

  it("does not retry non-retryable errors", async () => {
    for (const error of [new ToolValidationError("bad"), new ToolError("plain"), new Error("user"), "text"]) {
      const inner = scriptedInner([failed(error), ok(1)]);
      const { executor, sleep } = makeExecutor(inner);
      const result = await executor.execute(makeRequest());
      expect(inner.calls()).toBe(1);
      expect(sleep).not.toHaveBeenCalled();
      expect(result.exception).toBe(error);
      expect(result.metadata).toEqual({ timeoutMs: 1000, retryAttempts: 1 });
    }
  });

  it("retries a user error that opts in with retryable: true", async () => {
    class Busy extends Error {
      readonly retryable = true;
    }
    const inner = scriptedInner([failed(new Busy("busy")), ok("done")]);
    const { executor } = makeExecutor(inner);
    const result = await executor.execute(makeRequest());
    expect(result.success).toBe(true);
    expect(result.metadata.retryReasons).toEqual(["Busy"]);
  });

  describe("delayFor", () => {
    const inner = scriptedInner([ok(1)]);

    it("is min(initial × multiplier^index, max) without jitter", () => {
      const { executor } = makeExecutor(inner, {
        initial_delay_ms: 100,
        backoff_multiplier: 3,
        max_delay_ms: 2000,
      });
      expect([0, 1, 2, 3, 4].map((index) => executor.delayFor(index, undefined))).toEqual([
        100, 300, 900, 2000, 2000,
      ]);
    });

    it("with full jitter is random × base", () => {
      const { executor } = makeExecutor(inner, { jitter: "full", random: () => 0.25 });
      expect(executor.delayFor(0, undefined)).toBe(25);
      expect(executor.delayFor(2, undefined)).toBe(100);
      const zero = makeExecutor(inner, { jitter: "full", random: () => 0 }).executor;
      expect(zero.delayFor(3, undefined)).toBe(0);
    });

    it("with equal jitter is base/2 + random × base/2", () => {
      const { executor } = makeExecutor(inner, { jitter: "equal", random: () => 0.5 });
      expect(executor.delayFor(0, undefined)).toBe(75);
      expect(executor.delayFor(1, undefined)).toBe(150);
      const low = makeExecutor(inner, { jitter: "equal", random: () => 0 }).executor;
      expect(low.delayFor(1, undefined)).toBe(100);
      const high = makeExecutor(inner, { jitter: "equal", random: () => 0.999 }).executor;
      expect(high.delayFor(1, undefined)).toBe(200);
    });

    it("rounds to whole milliseconds", () => {
      const { executor } = makeExecutor(inner, { jitter: "full", random: () => 1 / 3 });
      expect(executor.delayFor(0, undefined)).toBe(33);
    });

    it("raises the delay to the error's retryAfterMs, never lowers it", () => {
      const { executor } = makeExecutor(inner, { jitter: "none" });
      expect(executor.delayFor(0, new ToolRateLimitError("x", { retryAfterMs: 1500 }))).toBe(1500);
      expect(executor.delayFor(0, new LLMRateLimitError("x", { retryAfterMs: 20 }))).toBe(100);
      expect(executor.delayFor(0, { retryAfterMs: "soon" })).toBe(100);
      const jittered = makeExecutor(inner, { jitter: "full", random: () => 0 }).executor;
      expect(jittered.delayFor(0, new ToolRateLimitError("x", { retryAfterMs: 40 }))).toBe(40);
    });
  });

  it("waits retryAfterMs before the retry", async () => {
    const inner = scriptedInner([failed(new ToolRateLimitError("slow", { retryAfterMs: 2500 })), ok(1)]);
    const { executor, sleeps } = makeExecutor(inner);
    const result = await executor.execute(makeRequest());
    expect(sleeps).toEqual([2500]);
    expect(result.metadata.retryDelaysMs).toEqual([2500]);
  });

  it("passes the request to the injected sleep and stops when it reports cancellation", async () => {
    const inner = scriptedInner([failed(new ToolUnavailableError("down")), ok(1)]);
    const request = makeRequest();
    const sleep = vi.fn(async () => {
      request.scope.cancel({ type: "cancelled" });
      return false;
    });
    const { executor } = makeExecutor(inner, { sleep });
    const result = await executor.execute(request);
    expect(sleep).toHaveBeenCalledExactlyOnceWith(100, request);
    expect(inner.calls()).toBe(1);
    expect(result.success).toBe(false);
    expect(result.metadata).toEqual({
      timeoutMs: 1000,
      retryAttempts: 1,
      retryDelaysMs: [100],
      retryReasons: ["ToolUnavailableError"],
    });
  });

  it("does not retry when the run is already cancelled", async () => {
    const scope = new CancelScope();
    scope.cancel({ type: "cancelled" });
    const inner = scriptedInner([failed(new ToolUnavailableError("down")), ok(1)]);
    const { executor, sleep } = makeExecutor(inner);
    const result = await executor.execute(makeRequest(scope));
    expect(inner.calls()).toBe(1);
    expect(sleep).not.toHaveBeenCalled();
    expect(result.metadata).toEqual({ timeoutMs: 1000, retryAttempts: 1 });
  });

  it("sleeps with a timer by default and a cancellation cuts the wait short", async () => {
    vi.useFakeTimers();
    const inner = scriptedInner([failed(new ToolUnavailableError("down")), ok("after wait")]);
    const executor = new RetryToolExecutor({
      inner,
      max_attempts: 3,
      initial_delay_ms: 1000,
      backoff_multiplier: 2,
      max_delay_ms: 5000,
      jitter: "none",
    });
    const first = executor.execute(makeRequest());
    await vi.advanceTimersByTimeAsync(999);
    expect(inner.calls()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await first).data).toBe("after wait");

    const innerTwo = scriptedInner([failed(new ToolUnavailableError("down")), ok("never")]);
    const executorTwo = new RetryToolExecutor({
      inner: innerTwo,
      max_attempts: 3,
      initial_delay_ms: 1000,
      backoff_multiplier: 2,
      max_delay_ms: 5000,
      jitter: "none",
    });
    const request = makeRequest();
    const second = executorTwo.execute(request);
    await vi.advanceTimersByTimeAsync(10);
    request.scope.cancel({ type: "cancelled" });
    const result = await second;
    expect(innerTwo.calls()).toBe(1);
    expect(result.success).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("closes its inner executor", async () => {
    const close = vi.fn(async () => {});
    const inner: ToolExecutor = { execute: async () => ok(1), close };
    const { executor } = makeExecutor(inner);
    expect(executor.inner).toBe(inner);
    await executor.close();
    expect(close).toHaveBeenCalledOnce();
  });
});
