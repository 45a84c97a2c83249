import { importOptionalPackage } from "../errors/import-optional-package.js";

/** The parts of `bullmq` the queue uses, typed structurally so Keel builds without the package. */
export interface BullmqModule {
  Queue: new (name: string, options: Record<string, unknown>) => BullQueue;
  Worker: new (
    name: string,
    processor: (job: BullJob, token?: string) => Promise<unknown>,
    options: Record<string, unknown>,
  ) => BullWorker;
  DelayedError: new (message?: string) => Error;
}

export interface BullQueue {
  add(name: string, data: unknown, options: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
  obliterate(options: { force: boolean }): Promise<void>;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

export interface BullJob {
  id?: string;
  data: unknown;
  attemptsMade: number;
  stalledCounter: number;
  failedReason?: string;
  token?: string;
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
  moveToWait(token?: string): Promise<number>;
}

export interface BullWorker {
  on(event: string, listener: (...args: never[]) => void): unknown;
  close(force?: boolean): Promise<void>;
  waitUntilReady(): Promise<unknown>;
}

/** The parts of `ioredis` the event fan-out uses. */
export interface RedisClient {
  pipeline(): RedisPipeline;
  xrange(
    key: string,
    start: string,
    end: string,
    ...rest: (string | number)[]
  ): Promise<[string, string[]][]>;
  get(key: string): Promise<string | null>;
  scan(cursor: string, ...args: (string | number)[]): Promise<[string, string[]]>;
  del(...keys: string[]): Promise<number>;
  subscribe(...channels: string[]): Promise<unknown>;
  unsubscribe(...channels: string[]): Promise<unknown>;
  on(event: string, listener: (...args: never[]) => void): unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
  status: string;
}

export interface RedisPipeline {
  xadd(key: string, ...args: (string | number)[]): RedisPipeline;
  publish(channel: string, message: string): RedisPipeline;
  set(key: string, value: string, ...args: (string | number)[]): RedisPipeline;
  expire(key: string, seconds: number): RedisPipeline;
  exec(): Promise<unknown>;
}

export interface IoredisModule {
  Redis: new (url: string, options: Record<string, unknown>) => RedisClient;
}

/**
 * Import the optional `bullmq` and `ioredis` packages when a `bullmq` queue is built, so Keel imports without
 * them; an absent one is a `PluginLoadError` naming it and how to install it.
 */
export async function importBullmq(
  specifiers: { bullmq: string; ioredis: string } = { bullmq: "bullmq", ioredis: "ioredis" },
): Promise<{ bullmq: BullmqModule; ioredis: IoredisModule }> {
  const bullmq = await importOptional<BullmqModule>(specifiers.bullmq);
  const ioredis = await importOptional<IoredisModule>(specifiers.ioredis);
  return { bullmq, ioredis };
}

async function importOptional<T>(specifier: string): Promise<T> {
  const module = await importOptionalPackage<{ default?: T } & Partial<T>>(specifier, {
    neededBy: 'run queue "bullmq"',
    hint: "npm install bullmq ioredis",
    context: { package: specifier },
  });
  return ("Queue" in module || "Redis" in module ? module : (module.default ?? module)) as T;
}
