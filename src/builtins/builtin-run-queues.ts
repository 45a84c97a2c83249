import { z } from "zod";
import { registerBuiltin } from "../plugins/plugin-registry.js";
import { BullmqRunQueue } from "../queue/bullmq-run-queue.js";
import { InProcessRunQueue } from "../queue/in-process-run-queue.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";

/** Config of the `bullmq` run queue (see `BullmqRunQueueOptions`). */
export const bullmqQueueConfig = builtOnFirstUse(() =>
  z.object({
    url: z.string().min(1).optional(),
    name: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,100}$/, "letters, digits, '_', '.' and '-'")
      .default("keel-runs"),
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,100}$/, "letters, digits, '_', '.' and '-'")
      .default("keel"),
    attempts: z.number().int().positive().default(3),
    lock_duration_ms: z.number().int().min(200).default(3000),
    stalled_interval_ms: z.number().int().min(100).default(1000),
    retry_delay_ms: z.number().int().nonnegative().default(1000),
    event_stream_max_len: z.number().int().positive().default(10_000),
    event_stream_ttl_seconds: z.number().int().positive().default(3600),
  }),
);

const inProcessQueueConfig = builtOnFirstUse(() => z.object({}).loose());

/** Register the `in_process` and `bullmq` run queues. */
export function registerRunQueueBuiltins(): void {
  registerBuiltin({
    kind: "run_queue",
    type: "in_process",
    get configSchema() {
      return inProcessQueueConfig();
    },
    create: () => new InProcessRunQueue(),
  });
  registerBuiltin({
    kind: "run_queue",
    type: "bullmq",
    get configSchema() {
      return bullmqQueueConfig();
    },
    requiresPackage: "bullmq",
    create(config) {
      const parsed = bullmqQueueConfig().parse(config);
      return BullmqRunQueue.open({
        ...(parsed.url === undefined ? {} : { url: parsed.url }),
        name: parsed.name,
        prefix: parsed.prefix,
        attempts: parsed.attempts,
        lockDurationMs: parsed.lock_duration_ms,
        stalledIntervalMs: parsed.stalled_interval_ms,
        retryDelayMs: parsed.retry_delay_ms,
        eventStreamMaxLen: parsed.event_stream_max_len,
        eventStreamTtlSeconds: parsed.event_stream_ttl_seconds,
      });
    },
  });
}
