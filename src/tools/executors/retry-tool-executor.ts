import { z } from "zod";
import type {
  StreamingToolExecutor,
  ToolExecutionRequest,
  ToolExecutionResult,
  ToolExecutionStreamPart,
  ToolExecutor,
} from "../../contracts/tool.js";
import { isRetryable } from "../../errors/keel-error.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";
import { executeStreamOf, missingResult } from "../execute-tool-call.js";

export const retryToolExecutorConfigSchema = builtOnFirstUse(() =>
  z.object({
    inner: z.unknown().default({ type: "safe" }),
    max_attempts: z.number().int().min(1).default(3),
    initial_delay_ms: z.number().int().min(0).default(200),
    backoff_multiplier: z.number().min(1).default(2),
    max_delay_ms: z.number().int().min(0).default(5000),
    jitter: z.enum(["none", "full", "equal"]).default("equal"),
  }),
);

export type RetryToolExecutorOptions = Omit<
  z.output<ReturnType<typeof retryToolExecutorConfigSchema>>,
  "inner"
> & {
  inner: ToolExecutor;
  /** Injectable for tests. */
  random?: () => number;
  sleep?: (ms: number, request: ToolExecutionRequest) => Promise<boolean>;
};

/**
 * Retries a call whose error is `retryable` (rate limits, unavailable services, timeouts) with exponential
 * backoff; a `retryAfterMs` on the error is a floor. Cancellation stops the waiting.
 */
export class RetryToolExecutor implements StreamingToolExecutor {
  private readonly options: RetryToolExecutorOptions;

  constructor(options: RetryToolExecutorOptions) {
    this.options = options;
  }

  get inner(): ToolExecutor {
    return this.options.inner;
  }

  async execute(request: ToolExecutionRequest): Promise<ToolExecutionResult> {
    const inner = this.options.inner;
    const retries = new Retries();
    let result = await inner.execute(request);
    while (await this.again(result, retries, request)) result = await inner.execute(request);
    return retries.annotate(result);
  }

  /** Each attempt's deltas as they come (a failed attempt's too, as `execute` emits them), then the last result. */
  async *executeStream(request: ToolExecutionRequest): AsyncIterable<ToolExecutionStreamPart> {
    const inner = this.options.inner;
    const retries = new Retries();
    let result: ToolExecutionResult;
    do {
      let last: ToolExecutionResult | undefined;
      for await (const part of executeStreamOf(inner, request)) {
        if (part.type === "delta") yield part;
        else last = part.result;
      }
      result = last ?? missingResult(request);
    } while (await this.again(result, retries, request));
    yield { type: "result", result: retries.annotate(result) };
  }

  /** Whether a failed attempt is tried again, after its backoff; counts the attempt. */
  private async again(result: ToolExecutionResult, retries: Retries, request: ToolExecutionRequest) {
    // A timed-out attempt aborted the call's signal; only the run's own cancellation ends the retries.
    if (!result.success) request.renewSignal?.();
    if (
      result.success ||
      retries.attempt >= this.options.max_attempts ||
      !isRetryable(result.exception) ||
      request.cancelled
    )
      return false;
    const delay = this.delayFor(retries.attempt - 1, result.exception);
    retries.delays.push(delay);
    retries.reasons.push((result.exception as Error)?.constructor?.name ?? "Error");
    // Before the wait, so a consumer sees why the call is slow while it backs off.
    request.context.emitEvent?.("tool.retry_requested", {
      toolId: request.toolId,
      toolCallId: request.context.toolCallId,
      attempt: retries.attempt + 1,
      error: result.error ?? (result.exception as Error)?.message ?? "error",
      delayMs: delay,
    });
    const slept = await (this.options.sleep ?? sleepUnlessCancelled)(delay, request);
    if (!slept) return false;
    retries.attempt++;
    return true;
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

/** What the attempts of one call waited and why, for the final result's metadata. */
class Retries {
  attempt = 1;
  readonly delays: number[] = [];
  readonly reasons: string[] = [];

  annotate(result: ToolExecutionResult): ToolExecutionResult {
    const metadata: Record<string, unknown> = { ...result.metadata, retryAttempts: this.attempt };
    if (this.delays.length > 0) {
      metadata.retryDelaysMs = this.delays;
      metadata.retryReasons = this.reasons;
    }
    return { ...result, metadata };
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
