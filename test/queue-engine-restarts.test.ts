import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime } from "../src/runtime/runtime.js";
import { gaplessEvents, readLedger, waitFor } from "./support/child-processes.js";
import { useBuiltCli } from "./support/cli-process.js";
import { queueCluster, waitForRuns } from "./support/queue-cluster.js";

/**
 * The engine under a batch of queued runs restarts: a Redis of the test's own (append-only file on, so the
 * queue survives it, as a production Redis for BullMQ is configured) is shut down and started again while
 * workers execute runs, and every run still ends completed.
 */

useBuiltCli();

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function startRedis(port: number, dir: string): void {
  execFileSync("redis-server", [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "yes",
    "--appendfsync",
    "always",
    "--daemonize",
    "yes",
  ]);
}

/** Run the batch, restart an engine once tool calls are under way, and check that every run completed. */
async function batchAcrossRestart(cluster: ReturnType<typeof queueCluster>, restart: () => Promise<void>) {
  await Promise.all([cluster.worker({ concurrency: 4 }), cluster.worker({ concurrency: 4 })]);
  const runtime = await Runtime.fromConfig(cluster.configPath);
  const runIds: string[] = [];
  try {
    for (let index = 0; index < 16; index++)
      runIds.push(await runtime.submit({ agentId: "ticker", inputText: `run ${index}` }));
  } finally {
    await runtime.close();
  }
  await waitFor(
    () => readLedger(cluster.ledger).length >= 8,
    () => "the workers to start tool calls",
  );
  await restart();
  const store = await cluster.store();
  await waitForRuns(store, runIds);
  for (const runId of runIds) {
    expect(await store.getRun(runId)).toMatchObject({ status: "done", stopReason: "completed" });
    await gaplessEvents(store, runId);
  }
  const calls = readLedger(cluster.ledger).map((line) => line.split(" ").slice(0, 2).join(" "));
  expect(new Set(calls).size).toBe(16 * 4);
}

async function redisUp(port: number): Promise<boolean> {
  try {
    return execFileSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).trim() === "PONG";
  } catch {
    return false;
  }
}

describe("a Redis restart during a batch of runs", async () => {
  const port = await freePort();
  let dir = "";
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "keel-redis-"));
    startRedis(port, dir);
  });
  const cluster = queueCluster({ steps: 4, tickMs: 150, redisUrl: `redis://127.0.0.1:${port}` });
  afterAll(async () => {
    await cluster.close();
    try {
      execFileSync("redis-cli", ["-p", String(port), "shutdown", "nosave"]);
    } catch {
      // Already down.
    }
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it("ends every run completed, each tool call's effect recorded once", async () => {
    await batchAcrossRestart(cluster, async () => {
      execFileSync("redis-cli", ["-p", String(port), "shutdown"]);
      // Down for a moment, then back with the queue it had.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      startRedis(port, dir);
      for (let tries = 0; !(await redisUp(port)) && tries < 100; tries++)
        await new Promise((resolve) => setTimeout(resolve, 50));
    });
  }, 120_000);
});
