import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { BullmqRunQueue } from "../../src/queue/bullmq-run-queue.js";
import { PostgresSessionManager } from "../../src/stores/postgres/postgres-session-manager.js";
import { resolveConnectionString } from "../../src/stores/postgres/resolve-connection-string.js";
import { waitFor } from "./child-processes.js";
import { type KeelProcess, startKeel } from "./cli-process.js";
import { repoRoot } from "./compile-for-children.js";

/**
 * A Keel deployment for the queue tests: one Postgres schema and one Redis key prefix of its own, a config
 * whose agent calls a `tick` tool `steps` times (each call appends `<runId> <toolCallId> <pid>` to a ledger
 * and waits `tickMs`), and `keel worker` / `keel serve` child processes started on it.
 */
export interface QueueCluster {
  dir: string;
  configPath: string;
  ledger: string;
  prefix: string;
  schema: string;
  store(): Promise<PostgresSessionManager>;
  queue(): Promise<BullmqRunQueue>;
  worker(options?: { concurrency?: number; graceMs?: number }): Promise<KeelProcess>;
  server(): Promise<{ child: KeelProcess; url: string }>;
  children: KeelProcess[];
  close(): Promise<void>;
}

export interface ClusterOptions {
  steps: number;
  tickMs: number;
  /** Queue config overrides (snake_case, as in the config file). */
  queue?: Record<string, unknown>;
  /** Redis URL (default the shared one). */
  redisUrl?: string;
  /** Postgres URL (default the shared one). */
  pgUrl?: string;
  /** The tick tool is not idempotent: a started call caught by a crash is reported, not run again. */
  nonIdempotent?: boolean;
  /** How long the agent's durable runs wait for a store that went away (`durable.store_outage_ms`). */
  storeOutageMs?: number;
}

export function queueCluster(options: ClusterOptions): QueueCluster {
  const id = randomBytes(5).toString("hex");
  const dir = mkdtempSync(join(tmpdir(), "keel-queue-"));
  const schema = `keel_queue_${id}`;
  const prefix = `keelq${id}`;
  const ledger = join(dir, "ledger.log");
  const pgUrl = options.pgUrl ?? resolveConnectionString();
  const require = createRequire(import.meta.url);
  const keelUrl = pathToFileURL(join(repoRoot, "dist/index.js")).href;
  const zodUrl = pathToFileURL(require.resolve("zod")).href;
  writeFileSync(
    join(dir, "tools.mjs"),
    `import { appendFileSync } from "node:fs";
import { defineTool } from ${JSON.stringify(keelUrl)};
import { z } from ${JSON.stringify(zodUrl)};
export const tick = defineTool({
  name: "tick",
  description: "Record a tick and wait a moment",
  inputSchema: z.object({ n: z.number() }),
  durableIdempotent: ${options.nonIdempotent !== true},
  execute: async ({ n }, ctx) => {
    appendFileSync(${JSON.stringify(ledger)}, \`\${ctx.runId} \${ctx.toolCallId} \${process.pid}\\n\`);
    await new Promise((resolve) => setTimeout(resolve, ${options.tickMs}));
    return n;
  },
});
`,
  );
  const script = [
    ...Array.from({ length: options.steps }, (_, n) => ({
      tool_calls: [{ name: "tick", arguments: { n } }],
    })),
    { text: "ticked" },
  ];
  const queueConfig = {
    prefix,
    name: "runs",
    ...(options.redisUrl === undefined ? {} : { url: options.redisUrl }),
    ...options.queue,
  };
  const config = {
    session: { type: "postgres", config: { connection_string: pgUrl, schema, pool_size: 40 } },
    queue: { type: "bullmq", config: queueConfig },
    agents: [
      {
        id: "ticker",
        name: "Ticker",
        llm: { provider: "mock", model: "mock-scripted", script },
        tools: [{ id: "tick", impl: "./tools.mjs#tick" }],
        ...(options.storeOutageMs === undefined
          ? {}
          : { durable: { store_outage_ms: options.storeOutageMs } }),
      },
    ],
  };
  const configPath = join(dir, "agent.json");
  writeFileSync(configPath, JSON.stringify(config));
  const children: KeelProcess[] = [];
  let store: PostgresSessionManager | undefined;
  let queue: BullmqRunQueue | undefined;
  return {
    dir,
    configPath,
    ledger,
    prefix,
    schema,
    children,
    store: async () => {
      store ??= await PostgresSessionManager.open({ connectionString: pgUrl, schema, poolSize: 4 });
      return store;
    },
    queue: async () => {
      queue ??= await BullmqRunQueue.open({
        prefix,
        name: "runs",
        ...(options.redisUrl === undefined ? {} : { url: options.redisUrl }),
      });
      return queue;
    },
    worker: async (workerOptions = {}) => {
      const child = startKeel([
        "worker",
        configPath,
        "--concurrency",
        String(workerOptions.concurrency ?? 4),
        "--grace-ms",
        String(workerOptions.graceMs ?? 10_000),
      ]);
      children.push(child);
      await waitFor(
        () => child.stdout.includes("is taking runs") || child.code !== undefined,
        () => `the worker to start; stderr:\n${child.stderr}`,
      );
      if (child.code !== undefined) throw new Error(`The worker exited: ${child.stdout}\n${child.stderr}`);
      return child;
    },
    server: async () => {
      const child = startKeel(["serve", configPath, "--port", "0"]);
      children.push(child);
      await waitFor(
        () => /at (http:\S+)/.test(child.stdout) || child.code !== undefined,
        () => `the server to listen; stderr:\n${child.stderr}`,
      );
      const url = /at (http:\S+)/.exec(child.stdout)?.[1];
      if (url === undefined) throw new Error(`The server exited: ${child.stdout}\n${child.stderr}`);
      return { child, url };
    },
    close: async () => {
      for (const child of children) if (child.code === undefined) child.kill("SIGKILL");
      await Promise.all(children.map((child) => child.done));
      await store?.close();
      // The queue's keys and run streams go, whether or not the test opened the queue itself.
      queue ??= await BullmqRunQueue.open({
        prefix,
        name: "runs",
        ...(options.redisUrl === undefined ? {} : { url: options.redisUrl }),
      });
      await queue.destroy().catch(() => {});
      await queue.close();
      const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
      await admin.query(`drop schema if exists ${schema} cascade`).catch(() => {});
      await admin.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Wait until every run's record is done, polling the store. */
export async function waitForRuns(
  store: PostgresSessionManager,
  runIds: readonly string[],
  timeoutMs = 120_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const done = await store.listRuns({ status: "done" });
    const finished = new Set(done.map((record) => record.runId));
    if (runIds.every((runId) => finished.has(runId))) return;
    if (Date.now() > until)
      throw new Error(`Timed out: ${runIds.filter((runId) => !finished.has(runId)).length} runs not done`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
