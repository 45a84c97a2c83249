import { getLogger } from "../logging/logger.js";
import type { QueuedRun, QueuedRunHandler, RunQueue, RunQueueConsumer } from "./run-queue.js";

/**
 * Runs execute in the process that enqueues them, at once: a runtime without a queue. Nothing survives the
 * process; a durable run on a persistent store is resumed by `keel serve --resume-interrupted` or `resumeRun`.
 */
export class InProcessRunQueue implements RunQueue {
  readonly type = "in_process";
  readonly distributed = false;
  private handler: QueuedRunHandler | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  async enqueue(run: QueuedRun): Promise<void> {
    const handler = this.handler;
    if (handler === undefined)
      throw new Error("The in_process queue has no consumer: the runtime is not ready");
    const done = handler(run, { attempt: 1, maxAttempts: 1 }).catch((error: unknown) => {
      getLogger().error(`Queued run ${run.runId} failed: ${(error as Error)?.message}`);
    });
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }

  consume(handler: QueuedRunHandler): RunQueueConsumer {
    this.handler = handler;
    return {
      stop: async (options = {}) => {
        this.handler = undefined;
        const grace = new Promise<void>((resolve) => setTimeout(resolve, options.graceMs ?? 0).unref());
        await Promise.race([Promise.allSettled(this.inFlight), grace]);
        return { handedBack: 0 };
      },
    };
  }

  async close(): Promise<void> {
    this.handler = undefined;
  }
}
