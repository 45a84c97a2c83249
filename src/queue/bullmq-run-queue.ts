import { getLogger } from "../logging/logger.js";
import {
  type BullJob,
  type BullmqModule,
  type BullQueue,
  type BullWorker,
  type IoredisModule,
  importBullmq,
  type RedisClient,
} from "./import-bullmq.js";
import { RedisEventFanout } from "./redis-event-fanout.js";
import type { QueuedRun, QueuedRunHandler, RunQueue, RunQueueConsumer } from "./run-queue.js";

/** Options of the `bullmq` run queue. */
export interface BullmqRunQueueOptions {
  /** Redis URL. Default: `$REDIS_URL`, else `redis://127.0.0.1:6379`. */
  url?: string;
  /** The queue's name. Default `keel-runs`. */
  name?: string;
  /** Prefix of every Redis key the queue and the event fan-out use. Default `keel`. */
  prefix?: string;
  /** A run is taken at most this many times (crashed workers included); then it is parked as failed. Default 3. */
  attempts?: number;
  /** A worker's lease on a run lasts this long unless renewed (renewed at half of it). Default 3000 ms. */
  lockDurationMs?: number;
  /** How often each worker looks for runs whose lease ran out. Default 1000 ms. */
  stalledIntervalMs?: number;
  /** Wait before a run whose session another process holds is tried again, and between failed tries. Default 1000 ms. */
  retryDelayMs?: number;
  /** About this many events stay on each run's Redis stream. Default 10,000. */
  eventStreamMaxLen?: number;
  /** A run's stream is dropped this long after the run finished. Default one hour. */
  eventStreamTtlSeconds?: number;
}

const BUSY = "run.busy";
/** How long a cancellation waits for a worker to take the run it names. */
const CANCEL_TTL_SECONDS = 24 * 3600;

/**
 * Runs kept in Redis with BullMQ, taken by `keel worker` processes. A worker holds a lease on each run it
 * executes (BullMQ's job lock, renewed while it runs); a worker that dies or hangs stops renewing it, and another
 * worker's stalled-job check hands the run to the queue again, where it is resumed from its latest checkpoint.
 * The lease alone could let two workers run one run after a long pause; the store's session lock is the second
 * guard: a worker that finds the run's session held hands the run back for later without counting a try.
 */
export class BullmqRunQueue implements RunQueue {
  readonly type = "bullmq";
  readonly distributed = true;
  readonly fanout: RedisEventFanout;
  private readonly workers = new Set<BullWorker>();
  private closed = false;

  private readonly bullmq: BullmqModule;
  private readonly ioredis: IoredisModule;
  private readonly queue: BullQueue;
  private readonly client: RedisClient;
  private readonly settings: Required<BullmqRunQueueOptions>;

  private constructor(parts: {
    bullmq: BullmqModule;
    ioredis: IoredisModule;
    queue: BullQueue;
    client: RedisClient;
    settings: Required<BullmqRunQueueOptions>;
  }) {
    this.bullmq = parts.bullmq;
    this.ioredis = parts.ioredis;
    this.queue = parts.queue;
    this.client = parts.client;
    const settings = parts.settings;
    this.settings = settings;
    this.fanout = new RedisEventFanout({
      client: parts.client,
      subscriber: () => this.connect(),
      prefix: `${settings.prefix}:${settings.name}`,
      maxLen: settings.eventStreamMaxLen,
      ttlSeconds: settings.eventStreamTtlSeconds,
    });
  }

  static async open(options: BullmqRunQueueOptions = {}): Promise<BullmqRunQueue> {
    const { bullmq, ioredis } = await importBullmq();
    const settings = {
      url: options.url ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      name: options.name ?? "keel-runs",
      prefix: options.prefix ?? "keel",
      attempts: options.attempts ?? 3,
      lockDurationMs: options.lockDurationMs ?? 3000,
      stalledIntervalMs: options.stalledIntervalMs ?? 1000,
      retryDelayMs: options.retryDelayMs ?? 1000,
      eventStreamMaxLen: options.eventStreamMaxLen ?? 10_000,
      eventStreamTtlSeconds: options.eventStreamTtlSeconds ?? 3600,
    };
    const client = new ioredis.Redis(settings.url, { maxRetriesPerRequest: null });
    client.on("error", () => {});
    const queue = new bullmq.Queue(settings.name, {
      connection: connectionOptions(settings.url),
      prefix: settings.prefix,
    });
    return new BullmqRunQueue({ bullmq, ioredis, queue, client, settings });
  }

  async enqueue(run: QueuedRun): Promise<void> {
    const jobId =
      run.kind === "start" ? jobIdOf(run.runId) : `${jobIdOf(run.runId)}-decide-${Date.now().toString(36)}`;
    await this.queue.add(run.kind, run, {
      jobId,
      // One more than the tries: the last delivery parks the run as failed with the error that ended the tries.
      attempts: this.settings.attempts + 1,
      // Doubling waits ride out an engine's restart (1, 2, 4 s with the defaults) without hammering it.
      backoff: { type: "exponential", delay: this.settings.retryDelayMs },
      removeOnComplete: { age: 3600, count: 10_000 },
      removeOnFail: { age: 24 * 3600 },
    });
  }

  async cancel(runId: string, reason?: string): Promise<void> {
    const message = JSON.stringify({ runId, reason: reason ?? null });
    // The key makes a run no worker holds yet start cancelled; the message reaches the one that holds it.
    await this.client
      .pipeline()
      .set(this.cancelKey(runId), message, "EX", CANCEL_TTL_SECONDS)
      .publish(this.cancelChannel(), message)
      .exec();
  }

  async cancelledBefore(runId: string): Promise<string | undefined> {
    const message = await this.client.get(this.cancelKey(runId));
    if (message === null) return undefined;
    return (JSON.parse(message) as { reason: string | null }).reason ?? "cancelled";
  }

  consume(
    handler: QueuedRunHandler,
    options: { concurrency: number; onCancel?: (runId: string, reason: string | undefined) => void },
  ): RunQueueConsumer {
    const { settings } = this;
    const onCancel = options.onCancel;
    let cancels: RedisClient | undefined;
    if (onCancel !== undefined) {
      cancels = this.connect();
      cancels.on("message", (_channel: never, message: never) => {
        const { runId, reason } = JSON.parse(message) as { runId: string; reason: string | null };
        onCancel(runId, reason ?? undefined);
      });
      cancels.subscribe(this.cancelChannel()).catch(() => {});
    }
    const active = new Map<string, { job: BullJob; token: string | undefined; done: Promise<unknown> }>();
    const processor = async (job: BullJob, token?: string): Promise<void> => {
      const run = job.data as QueuedRun;
      const attempt = job.attemptsMade + job.stalledCounter + 1;
      const delivery = {
        attempt,
        maxAttempts: settings.attempts,
        ...(job.failedReason
          ? { previousError: job.failedReason }
          : job.stalledCounter > 0
            ? { previousError: "the worker that held the run stopped renewing its lease (it died or hung)" }
            : {}),
      };
      const done = handler(run, delivery);
      const key = job.id ?? run.runId;
      active.set(key, { job, token, done });
      try {
        await done;
      } catch (error) {
        if ((error as { code?: unknown })?.code !== BUSY) throw error;
        // Another process holds the run's session: it is running it. Try again later, without counting a try.
        await job.moveToDelayed(Date.now() + settings.retryDelayMs, token);
        throw new this.bullmq.DelayedError();
      } finally {
        active.delete(key);
      }
    };
    const worker = new this.bullmq.Worker(settings.name, processor, {
      connection: connectionOptions(settings.url),
      prefix: settings.prefix,
      concurrency: options.concurrency,
      lockDuration: settings.lockDurationMs,
      stalledInterval: settings.stalledIntervalMs,
      // Keel counts the tries itself (stalls and failures together) and parks the run; BullMQ must not fail it first.
      maxStalledCount: settings.attempts + 1,
    });
    worker.on("error", (error: never) => {
      getLogger().warn(`Run queue worker: ${(error as Error).message}`);
    });
    this.workers.add(worker);
    let stopping: Promise<{ handedBack: number }> | undefined;
    return {
      stop: (stopOptions = {}) => {
        stopping ??= (async () => {
          // Take no more runs; the runs in flight go on meanwhile.
          const closing = worker.close();
          closing.catch(() => {});
          const graceMs = stopOptions.graceMs ?? 10_000;
          const grace = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
          await Promise.race([Promise.allSettled([...active.values()].map((entry) => entry.done)), grace]);
          let handedBack = 0;
          for (const { job, token } of active.values()) {
            // Back to waiting now, rather than when the lease runs out: another worker resumes it at once.
            await job.moveToWait(token).then(
              () => handedBack++,
              () => {},
            );
          }
          this.workers.delete(worker);
          cancels?.disconnect();
          if (handedBack === 0) await closing.catch(() => {});
          return { handedBack };
        })();
        return stopping;
      },
    };
  }

  /** Counts of the queue's runs by state (waiting, active, completed, failed, delayed). */
  counts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts("waiting", "active", "completed", "failed", "delayed");
  }

  /** Remove the queue, its runs, their event streams and cancellations from Redis (tests and demos). */
  async destroy(): Promise<void> {
    await this.queue.obliterate({ force: true });
    const { client, settings } = this;
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(
        cursor,
        "MATCH",
        `${settings.prefix}:${settings.name}:*`,
        "COUNT",
        500,
      );
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== "0");
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.workers].map((worker) => worker.close()));
    await this.fanout.close();
    await this.queue.close();
    await this.client.quit().catch(() => this.client.disconnect());
  }

  private cancelKey(runId: string): string {
    return `${this.settings.prefix}:${this.settings.name}:cancelled:${runId}`;
  }

  private cancelChannel(): string {
    return `${this.settings.prefix}:${this.settings.name}:cancel`;
  }

  private connect(): RedisClient {
    const client = new this.ioredis.Redis(this.settings.url, { maxRetriesPerRequest: null });
    client.on("error", () => {});
    return client;
  }
}

/** Options BullMQ opens its own connections with (and closes them with the queue or worker). */
function connectionOptions(url: string): Record<string, unknown> {
  const parsed = new URL(url);
  const db = Number(parsed.pathname.slice(1));
  return {
    host: parsed.hostname || "127.0.0.1",
    port: Number(parsed.port || 6379),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(Number.isInteger(db) && db > 0 ? { db } : {}),
    ...(parsed.protocol === "rediss:" ? { tls: {} } : {}),
    // Workers block on Redis; BullMQ needs commands to wait out a reconnect rather than fail.
    maxRetriesPerRequest: null,
  };
}

/** BullMQ refuses custom job ids with a colon. */
function jobIdOf(runId: string): string {
  return runId.replaceAll(":", "_");
}
