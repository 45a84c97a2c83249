import { RuntimeEvent } from "../contracts/runtime-event.js";
import { getLogger } from "../logging/logger.js";
import type { RedisClient } from "./import-bullmq.js";
import type { RunEventFanout } from "./run-queue.js";

export interface RedisEventFanoutOptions {
  /** Commands: appends and reads. */
  client: RedisClient;
  /** A second connection for pub/sub, made when the first run is watched. */
  subscriber: () => RedisClient;
  /** Key prefix of the run streams and notification channels. */
  prefix: string;
  /** About this many events stay on a run's stream (older ones are in the store). */
  maxLen: number;
  /** A stream is dropped this long after its run's last `run.finished`. */
  ttlSeconds: number;
}

/**
 * Run events over Redis: each event is appended to its run's stream (`XADD`, bounded by `maxLen`) and a
 * notification published on the run's channel, in one pipeline, so events keep their order on the one
 * connection. Readers wait for the notification and read the stream from the last position they saw: a
 * reader that missed a notification misses no event, and one notification wakes every reader of the run.
 */
export class RedisEventFanout implements RunEventFanout {
  private subscriber: RedisClient | undefined;
  private readonly watchers = new Map<string, Set<() => void>>();
  private warned = false;
  private pending: RuntimeEvent[] = [];

  constructor(private readonly options: RedisEventFanoutOptions) {}

  publish(event: RuntimeEvent): void {
    if (event.runId === "") return;
    this.pending.push(event);
    // Events emitted in one turn of the loop go to Redis in one pipeline: a step's burst costs one round trip.
    if (this.pending.length === 1) setImmediate(this.flush);
  }

  private readonly flush = (): Promise<unknown> => {
    const events = this.pending;
    if (events.length === 0) return Promise.resolve();
    this.pending = [];
    const { client, prefix, maxLen, ttlSeconds } = this.options;
    const pipeline = client.pipeline();
    const notify = new Map<string, number>();
    for (const event of events) {
      const key = streamKey(prefix, event.runId);
      pipeline.xadd(key, "MAXLEN", "~", maxLen, "*", "e", encode(event));
      // Streams of runs whose worker died without finishing them go too, a while later.
      if (event.kind === "run.finished" || event.kind === "run.started") pipeline.expire(key, ttlSeconds);
      notify.set(event.runId, event.sequence);
    }
    for (const [runId, sequence] of notify) pipeline.publish(channel(prefix, runId), String(sequence));
    return pipeline.exec().catch((error: unknown) => {
      // The store's log keeps every event; a reader that finds a gap on the stream reads it there.
      if (this.warned) return;
      this.warned = true;
      getLogger().warn(`Could not publish run events to Redis: ${(error as Error).message}`);
    });
  };

  async read(runId: string, after: string): Promise<{ position: string; event: RuntimeEvent }[]> {
    const key = streamKey(this.options.prefix, runId);
    const entries = await this.options.client.xrange(key, after === "0" ? "-" : `(${after}`, "+");
    return entries.map(([position, fields]) => {
      const body = JSON.parse(fields[1] ?? "{}") as {
        kind: string;
        sequence: number;
        sessionId: string;
        agentId: string;
        timestampMs: number;
        payload: Record<string, unknown>;
      };
      return {
        position,
        event: new RuntimeEvent(
          body.kind,
          body.payload,
          body.timestampMs,
          runId,
          body.sessionId,
          body.agentId,
          body.sequence,
        ),
      };
    });
  }

  watch(runId: string, onChange: () => void): () => void {
    const name = channel(this.options.prefix, runId);
    let set = this.watchers.get(name);
    if (set === undefined) {
      set = new Set();
      this.watchers.set(name, set);
      this.subscriberConnection()
        .subscribe(name)
        .catch(() => {});
    }
    set.add(onChange);
    return () => {
      const current = this.watchers.get(name);
      if (current === undefined) return;
      current.delete(onChange);
      if (current.size > 0) return;
      this.watchers.delete(name);
      this.subscriber?.unsubscribe(name).catch(() => {});
    };
  }

  async close(): Promise<void> {
    // Events of this turn not yet sent go before the connection does.
    await this.flush();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    this.watchers.clear();
    if (subscriber !== undefined) await subscriber.quit().catch(() => subscriber.disconnect());
  }

  private subscriberConnection(): RedisClient {
    if (this.subscriber !== undefined) return this.subscriber;
    const subscriber = this.options.subscriber();
    subscriber.on("message", (name: never) => {
      for (const notify of this.watchers.get(name) ?? []) notify();
    });
    // After a reconnect the channels are subscribed again by ioredis; readers re-read in case they missed one.
    subscriber.on("ready", () => {
      for (const set of this.watchers.values()) for (const notify of set) notify();
    });
    subscriber.on("error", () => {});
    this.subscriber = subscriber;
    return subscriber;
  }
}

function streamKey(prefix: string, runId: string): string {
  return `${prefix}:events:${runId}`;
}

function channel(prefix: string, runId: string): string {
  return `${prefix}:run:${runId}`;
}

function encode(event: RuntimeEvent): string {
  return JSON.stringify(
    {
      kind: event.kind,
      sequence: event.sequence,
      sessionId: event.sessionId,
      agentId: event.agentId,
      timestampMs: event.timestampMs,
      payload: event.payload,
    },
    jsonSafe,
  );
}

function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}
