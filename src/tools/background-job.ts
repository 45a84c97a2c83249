import type { BackgroundTool, JobHandle, ToolExecutionRequest } from "../contracts/tool.js";
import { ToolCancelledError, ToolError } from "../errors/error-classes.js";
import { getLogger } from "../logging/logger.js";

/** How often a background job is polled: the first wait, doubled after each poll up to the cap. */
export interface BackgroundPollOptions {
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_BACKGROUND_POLL: Readonly<BackgroundPollOptions> = Object.freeze({
  initialDelayMs: 250,
  maxDelayMs: 5000,
});

/**
 * One call of a background tool: submit its job — or take up the job the call already submitted
 * (`request.backgroundJob.handle`, a resumed call) and poll that one at once — then poll it, waiting
 * `initialDelayMs`, doubled after each poll up to `maxDelayMs`, until it ends. A succeeded job's `result` is the
 * call's result; a failed or cancelled job fails the call. Aborting the call's signal (the run cancelled, the
 * executor's timeout) stops the polling and calls `cancelJob` at once; the call's error is the abort's reason.
 * A tool with `interruptBehavior: "block"` is polled to the end whatever happens, like any blocking tool.
 */
export async function runBackgroundJob(
  tool: BackgroundTool,
  request: ToolExecutionRequest,
  options: BackgroundPollOptions = DEFAULT_BACKGROUND_POLL,
): Promise<unknown> {
  const signal = request.executionSpec.interruptBehavior === "block" ? undefined : request.signal;
  const slot = request.backgroundJob;
  const ctx = request.context;
  let handle: JobHandle | undefined = slot?.handle;
  let cancelled = false;
  const cancel = (): void => {
    if (cancelled || handle === undefined) return;
    cancelled = true;
    slot?.finished();
    cancelJob(tool, handle, request);
  };
  signal?.addEventListener("abort", cancel);
  try {
    if (signal?.aborted) throw abortError(signal, request.toolId);
    let delay = options.initialDelayMs;
    if (handle === undefined) {
      handle = await tool.invokeBackground(request.params, ctx);
      // Aborted while submitting: the job exists now and nobody will wait for it.
      if (signal?.aborted) {
        cancel();
        throw abortError(signal, request.toolId);
      }
      await slot?.submitted(handle);
      await pause(delay, signal, request.toolId);
      delay = Math.min(delay * 2, options.maxDelayMs);
    }
    for (;;) {
      const status = await tool.pollJob(handle, ctx);
      if (signal?.aborted) throw abortError(signal, request.toolId);
      switch (status.status) {
        case "succeeded":
          slot?.finished();
          return status.result;
        case "failed":
          slot?.finished();
          throw new ToolError(status.error ?? `Job ${handle.jobId} of tool '${request.toolId}' failed`, {
            context: { toolId: request.toolId, jobId: handle.jobId },
          });
        case "cancelled":
          slot?.finished();
          throw new ToolCancelledError(`Job ${handle.jobId} of tool '${request.toolId}' was cancelled`, {
            context: { toolId: request.toolId, jobId: handle.jobId },
            hint: "Something other than this run cancelled the job; call the tool again to run it anew",
          });
        default:
          await pause(delay, signal, request.toolId);
          delay = Math.min(delay * 2, options.maxDelayMs);
      }
    }
  } finally {
    signal?.removeEventListener("abort", cancel);
  }
}

/** Cancel a job nobody waits for any more; its failure is only logged, the call has its outcome already. */
function cancelJob(tool: BackgroundTool, handle: JobHandle, request: ToolExecutionRequest): void {
  const warn = (error: unknown) =>
    getLogger().warn(`cancelJob of tool '${request.toolId}' failed for job ${handle.jobId}`, {
      error: error instanceof Error ? error.message : String(error),
    });
  try {
    Promise.resolve(tool.cancelJob(handle, request.context)).catch(warn);
  } catch (error) {
    warn(error);
  }
}

/**
 * A wait between polls. A Node timer rather than the shared deadline queue: the queue's timer does not hold the
 * process open, and between two polls of a remote job this wait may be the only thing a process has to do.
 */
function pause(ms: number, signal: AbortSignal | undefined, toolId: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer);
      reject(abortError(signal!, toolId));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    signal?.addEventListener("abort", stop, { once: true });
  });
}

function abortError(signal: AbortSignal, toolId: string): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new ToolCancelledError(`Tool '${toolId}' cancelled before its background job finished`);
}
