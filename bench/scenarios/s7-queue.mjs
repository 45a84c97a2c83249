/**
 * S7 queue: runs through the BullMQ queue on Redis, executed by `keel worker` processes on the Postgres store.
 * Figures: runs per second with 1, 2 and 4 workers (a short scripted run: two tool calls and an answer),
 * queue latency (a run's record stored by `submit` → its first event on a worker), and takeover time after a
 * worker is killed with SIGKILL mid-run (kill → the next tool call of its run on another worker), with the
 * default lease (3 s, stalled check every 1 s) and a shorter one. Needs Redis at $REDIS_URL (default
 * 127.0.0.1:6379) and Postgres at $PGURL (default 127.0.0.1:5432/test); uses a key prefix and a schema of its
 * own and removes both. Run alone with `node bench/scenarios/s7-queue.mjs [--quick]` after `npm run build`.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { BullmqRunQueue, Runtime } from "../../dist/index.js";
import { PostgresSessionManager } from "../../dist/stores/postgres/index.js";
import { percentile, round } from "../measure.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const MAIN = join(root, "dist/cli/main.js");
const PG_URL = process.env.PGURL ?? `postgres://${process.env.USER ?? "postgres"}@127.0.0.1:5432/test`;

/**
 * A deployment of its own: config, tool module (a ledger line `<ms> <runId> <toolCallId> <pid>` per call),
 * schema and key prefix. The demo (scripts/queue-demo.mjs) uses it too.
 */
export function deployment({ steps, tickMs, queue = {} }) {
  const id = randomBytes(4).toString("hex");
  const dir = mkdtempSync(join(tmpdir(), "keel-s7-"));
  const ledger = join(dir, "ledger.log");
  const require = createRequire(import.meta.url);
  writeFileSync(
    join(dir, "tools.mjs"),
    `import { appendFileSync } from "node:fs";
import { defineTool } from ${JSON.stringify(pathToFileURL(join(root, "dist/index.js")).href)};
import { z } from ${JSON.stringify(pathToFileURL(require.resolve("zod")).href)};
export const tick = defineTool({
  name: "tick",
  description: "tick",
  inputSchema: z.object({ n: z.number() }),
  execute: async ({ n }, ctx) => {
    appendFileSync(${JSON.stringify(ledger)}, \`\${Date.now()} \${ctx.runId} \${ctx.toolCallId} \${process.pid}\\n\`);
    if (${tickMs} > 0) await new Promise((resolve) => setTimeout(resolve, ${tickMs}));
    return n;
  },
});
`,
  );
  const script = [
    ...Array.from({ length: steps }, (_, n) => ({ tool_calls: [{ name: "tick", arguments: { n } }] })),
    { text: "done" },
  ];
  const schema = `keel_s7_${id}`;
  const prefix = `keels7${id}`;
  const config = {
    session: { type: "postgres", config: { connection_string: PG_URL, schema, pool_size: 8 } },
    queue: { type: "bullmq", config: { prefix, name: "runs", ...queue } },
    agents: [
      {
        id: "ticker",
        name: "Ticker",
        llm: { provider: "mock", model: "mock-scripted", script },
        tools: [{ id: "tick", impl: "./tools.mjs#tick" }],
        runtime: { max_steps: steps + 2 },
      },
    ],
  };
  const configPath = join(dir, "agent.json");
  writeFileSync(configPath, JSON.stringify(config));
  const workers = [];
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  return {
    dir,
    configPath,
    schema,
    prefix,
    admin,
    ledgerLines: () => {
      try {
        return readFileSync(ledger, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => line.split(" "));
      } catch {
        return [];
      }
    },
    startWorker: (concurrency) =>
      new Promise((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [MAIN, "worker", configPath, "--concurrency", String(concurrency)],
          {
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        workers.push(child);
        let out = "";
        child.stdout.on("data", (part) => {
          out += part;
          if (out.includes("is taking runs")) resolve(child);
        });
        child.stderr.on("data", (part) => {
          out += part;
        });
        child.once("exit", () => reject(new Error(`worker exited: ${out}`)));
      }),
    stopWorkers: async () => {
      await Promise.all(
        workers.map(
          (child) =>
            new Promise((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once("exit", resolve);
              child.kill("SIGTERM");
            }),
        ),
      );
      workers.length = 0;
    },
    drop: async () => {
      const queueHandle = await BullmqRunQueue.open({ prefix, name: "runs" });
      await queueHandle.destroy().catch(() => {});
      await queueHandle.close();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
      rmSync(dir, { recursive: true, force: true });
    },
    store: () => PostgresSessionManager.open({ connectionString: PG_URL, schema, poolSize: 2 }),
  };
}

async function waitDone(deploy, runIds, timeoutMs = 300_000) {
  const until = Date.now() + timeoutMs;
  // One count query per poll: reading every record back would load the database the workers are measured on.
  for (;;) {
    const { rows } = await deploy.admin.query(
      `select count(*)::int as n from ${deploy.schema}.runs where status = 'done' and run_id = any($1)`,
      [runIds],
    );
    if (rows[0].n === runIds.length) return;
    if (Date.now() > until) throw new Error("S7: runs did not finish");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Per run, its record's creation by `submit` → its first event on a worker, in ms. */
async function queueLatencies(store, runIds) {
  const latencies = [];
  for (const runId of runIds) {
    const record = await store.getRun(runId);
    const [first] = await store.loadEvents(runId);
    latencies.push(first.timestampMs - Date.parse(record.createdAt));
  }
  return latencies;
}

/** Runs per second and queue latency with `workers` worker processes. */
async function throughput({ workers, runs, concurrency, latencyRuns, log }) {
  const deploy = deployment({ steps: 2, tickMs: 0 });
  const runtime = await Runtime.fromConfig(deploy.configPath);
  const store = await deploy.store();
  try {
    for (let index = 0; index < workers; index++) await deploy.startWorker(concurrency);
    // A warm-up run per worker loads the agent and warms the connections.
    const warm = [];
    for (let index = 0; index < workers * 2; index++)
      warm.push(await runtime.submit({ agentId: "ticker", inputText: "warm" }));
    await waitDone(deploy, warm);
    const started = performance.now();
    const runIds = [];
    for (let index = 0; index < runs; index++)
      runIds.push(await runtime.submit({ agentId: "ticker", inputText: `run ${index}` }));
    await waitDone(deploy, runIds);
    const wallMs = performance.now() - started;
    const waits = await queueLatencies(store, runIds);
    // Queue latency proper: one run at a time on idle workers, so no backlog is counted.
    const single = [];
    for (let index = 0; index < latencyRuns; index++) {
      const runId = await runtime.submit({ agentId: "ticker", inputText: `single ${index}` });
      await waitDone(deploy, [runId]);
      single.push(runId);
    }
    const latencies = await queueLatencies(store, single);
    const line = {
      scenario: "S7",
      impl: "keel",
      workers,
      concurrency,
      runs,
      runsPerSecond: round(runs / (wallMs / 1000), 1),
      wallMs: round(wallMs, 0),
      burstWaitP50Ms: round(percentile(waits, 0.5), 1),
      queueLatencyP50Ms: round(percentile(latencies, 0.5), 1),
      queueLatencyP99Ms: round(percentile(latencies, 0.99), 1),
    };
    log(
      `S7 ${workers} worker(s): ${line.runsPerSecond} runs/s; queue latency p50 ${line.queueLatencyP50Ms} ms ` +
        `(idle workers), ${line.burstWaitP50Ms} ms (in the burst)`,
    );
    return line;
  } finally {
    await runtime.close();
    await store.close();
    await deploy.stopWorkers();
    await deploy.drop();
  }
}

/** Kill the worker running a run mid-tool; the time until the run's next tool call starts on the other worker. */
async function takeover({ queue, label, log, repeats }) {
  const times = [];
  for (let repeat = 0; repeat < repeats; repeat++) {
    const deploy = deployment({ steps: 40, tickMs: 100, queue });
    const runtime = await Runtime.fromConfig(deploy.configPath);
    const store = await deploy.store();
    try {
      const first = await deploy.startWorker(1);
      const runId = await runtime.submit({ agentId: "ticker", inputText: "long" });
      while (deploy.ledgerLines().length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      const second = await deploy.startWorker(1);
      const killedAt = Date.now();
      first.kill("SIGKILL");
      let resumedAt;
      const giveUp = Date.now() + 60_000;
      while (resumedAt === undefined) {
        if (Date.now() > giveUp) throw new Error("S7: the run was not taken over within 60 s");
        const line = deploy.ledgerLines().find(([, , , pid]) => pid === String(second.pid));
        if (line !== undefined) resumedAt = Number(line[0]);
        else await new Promise((resolve) => setTimeout(resolve, 5));
      }
      times.push(resumedAt - killedAt);
      await waitDone(deploy, [runId]);
    } finally {
      await runtime.close();
      await store.close();
      await deploy.stopWorkers();
      await deploy.drop();
    }
  }
  const line = {
    scenario: "S7",
    impl: "keel",
    takeover: label,
    lockDurationMs: queue.lock_duration_ms ?? 3000,
    stalledIntervalMs: queue.stalled_interval_ms ?? 1000,
    repeats,
    takeoverMedianMs: round(percentile(times, 0.5), 0),
    takeoverMaxMs: round(Math.max(...times), 0),
  };
  log(`S7 takeover (${label}): median ${line.takeoverMedianMs} ms, max ${line.takeoverMaxMs} ms`);
  return line;
}

export async function s7Queue({ quick, log }) {
  const runs = quick ? 60 : 300;
  const lines = [];
  const latencyRuns = quick ? 10 : 30;
  for (const workers of [1, 2, 4])
    lines.push(await throughput({ workers, runs, concurrency: 8, latencyRuns, log }));
  const repeats = quick ? 1 : 3;
  lines.push(await takeover({ queue: {}, label: "default", log, repeats }));
  lines.push(
    await takeover({
      queue: { lock_duration_ms: 1000, stalled_interval_ms: 250 },
      label: "short",
      log,
      repeats,
    }),
  );
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const log = (line) => process.stderr.write(`${line}\n`);
  for (const line of await s7Queue({ quick: process.argv.includes("--quick"), log }))
    process.stdout.write(`${JSON.stringify(line)}\n`);
}
