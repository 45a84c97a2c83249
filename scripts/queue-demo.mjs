#!/usr/bin/env node
/**
 * A local multi-host Keel deployment: Postgres and Redis (already running), two `keel serve` nodes and three
 * `keel worker` processes. It starts 20 runs through node 1, streams one of them from node 2, kills a worker with
 * SIGKILL halfway, and shows every run finishing on the workers that remain. Cleans up its schema and keys.
 *
 *   npm run build && node scripts/queue-demo.mjs
 *
 * REDIS_URL (default redis://127.0.0.1:6379) and PGURL (default postgres://$USER@127.0.0.1:5432/test) say where
 * the engines are. The deployment (config, tool, ledger of tool calls) is the one benchmark S7 uses.
 */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { deployment } from "../bench/scenarios/s7-queue.mjs";

const MAIN = join(dirname(fileURLToPath(import.meta.url)), "../dist/cli/main.js");
const deploy = deployment({ steps: 6, tickMs: 150 });
const RUNS = 20;

const servers = [];
function serve() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, "serve", deploy.configPath, "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    servers.push(child);
    let out = "";
    child.stdout.on("data", (part) => {
      out += part;
      const url = /at (http:\S+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
    child.once("exit", (code) => reject(new Error(`keel serve exited ${code}: ${out}`)));
  });
}

/** Print a run's SSE frames as they come; `onEvent` sees each kind. */
async function follow(url, onEvent) {
  const reader = (await fetch(url)).body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    text += decoder.decode(value, { stream: true });
    for (let end = text.indexOf("\n\n"); end !== -1; end = text.indexOf("\n\n")) {
      const frame = text.slice(0, end);
      text = text.slice(end + 2);
      const sequence = /^id: (\d+)/m.exec(frame)?.[1];
      const kind = /^event: (.+)$/m.exec(frame)?.[1];
      if (sequence) console.log(`  ${sequence.padStart(3)} ${kind}`);
      onEvent(kind);
    }
  }
}

try {
  const [node1, node2] = [await serve(), await serve()];
  const workers = [await deploy.startWorker(4), await deploy.startWorker(4), await deploy.startWorker(4)];
  console.log(`node 1 ${node1}, node 2 ${node2}; workers ${workers.map((worker) => worker.pid).join(", ")}`);
  const runIds = [];
  for (let index = 0; index < RUNS; index++) {
    const response = await fetch(`${node1}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ agentId: "ticker", inputText: `run ${index}` }),
    });
    runIds.push((await response.json()).runId);
  }
  console.log(`${RUNS} runs queued through node 1; following ${runIds[0]} from node 2:`);
  let killed = false;
  await follow(`${node2}/runs/${runIds[0]}/events`, (kind) => {
    if (killed || kind !== "tool.finished") return;
    killed = true;
    workers[0].kill("SIGKILL");
    console.log(`  -- killed worker ${workers[0].pid} (SIGKILL) --`);
  });
  for (;;) {
    const { rows } = await deploy.admin.query(
      `select count(*)::int as n from ${deploy.schema}.runs where status = 'done'`,
    );
    if (rows[0].n >= RUNS) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const lines = deploy.ledgerLines();
  const byPid = new Map();
  for (const [, , , pid] of lines) byPid.set(pid, (byPid.get(pid) ?? 0) + 1);
  console.log(
    `all ${RUNS} runs done; tool calls per worker: ${[...byPid].map(([pid, n]) => `${pid}: ${n}`).join(", ")}`,
  );
  const distinct = new Set(lines.map(([, run, call]) => `${run} ${call}`)).size;
  console.log(
    `${distinct} distinct tool calls; ${lines.length - distinct} ran again (in flight on the killed worker)`,
  );
} finally {
  for (const child of servers) child.kill("SIGTERM");
  await deploy.stopWorkers();
  await deploy.drop();
}
