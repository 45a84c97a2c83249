import { z } from "zod";
import { isRetryable } from "../../errors/keel-error.js";
import type { ToolExecutionRequest, ToolExecutionResult, ToolExecutor } from "../tool-executor.js";

export const retryToolExecutorConfigSchema = z.object({
  inner: z.unknown().default({ type: "safe" }),
  max_attempts: z.number().int().min(1).default(3),
  initial_delay_ms: z.number().int().min(0).default(200),
  backoff_multiplier: z.number().min(1).default(2),
  max_delay_ms: z.number().int().min(0).default(5000),
  jitter: z.enum(["none", "full", "equal"]).default("equal"),
});

export type RetryToolExecutorOptions = Omit<z.output<typeof retryToolExecutorConfigSchema>, "inner"> & {
  inner: ToolExecutor;
  /** Injectable for tests. */
  random?: () => number;
  sleep?: (ms: number, request: ToolExecutionRequest) => Promise<boolean>;
};

/**
 * Retries a call whose error is `retryable` (rate limits, unavailable services, timeouts) with exponential
 * backoff; a `retryAfterMs` on the error is a floor. Cancellation stops the waiting.
 */
export class RetryToolExecutor implements ToolExecutor {
  private readonly options: RetryToolExecutorOptions;

  constructor(options: RetryToolExecutorOptions) {
    this.options = options;
  }

  get inner(): ToolExecutor {
    return this.options.inner;
  }

  async execute(request: ToolExecutionRequest): Promise<ToolExecutionResult> {
    const { inner, max_attempts } = this.options;
    const delays: number[] = [];
    const reasons: string[] = [];
    let result = await inner.execute(request);
    let attempt = 1;
    while (!result.success && attempt < max_attempts && isRetryable(result.exception) && !request.cancelled) {
      const delay = this.delayFor(attempt - 1, result.exception);
      delays.push(delay);
      reasons.push((result.exception as Error)?.constructor?.name ?? "Error");
      // Before the wait, so a consumer sees why the call is slow while it backs off.
      request.context.emitEvent?.("tool.retry_requested", {
        toolId: request.toolId,
        toolCallId: request.context.toolCallId,
        attempt: attempt + 1,
        error: result.error ?? (result.exception as Error)?.message ?? "error",
        delayMs: delay,
      });
      const slept = await (this.options.sleep ?? sleepUnlessCancelled)(delay, request);
      if (!slept) break;
      result = await inner.execute(request);
      attempt++;
    }
    const metadata: Record<string, unknown> = { ...result.metadata, retryAttempts: attempt };
    if (delays.length > 0) {
      metadata.retryDelaysMs = delays;
      metadata.retryReasons = reasons;
    }
    return { ...result, metadata };
  }

  /** The wait before retry `index` (0-based): `min(initial × multiplier^index, max)`, jittered, floored. */
  delayFor(index: number, error: unknown): number {
    const { initial_delay_ms, backoff_multiplier, max_delay_ms, jitter } = this.options;
    const random = this.options.random ?? Math.random;
    const base = Math.min(initial_delay_ms * backoff_multiplier ** index, max_delay_ms);
    let delay = base;
    if (jitter === "full") delay = random() * base;
    else if (jitter === "equal") delay = base / 2 + (random() * base) / 2;
    const retryAfter = (error as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
    if (typeof retryAfter === "number" && retryAfter > delay) delay = retryAfter;
    return Math.round(delay);
  }

  async close(): Promise<void> {
    await this.options.inner.close?.();
  }
}

function sleepUnlessCancelled(ms: number, request: ToolExecutionRequest): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      unregister();
      resolve(true);
    }, ms);
    const unregister = request.onCancel(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}
