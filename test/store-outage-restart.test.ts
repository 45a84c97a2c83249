import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresSessionManager } from "../src/stores/postgres/index.js";
import {
  type Executions,
  expectAllCompleted,
  faultRuntime,
  startRuns,
  undisturbedMs,
  until,
} from "./support/store-faults.js";

/**
 * 200 durable runs on the postgres store while its server really goes down: a throwaway cluster of its own,
 * made for this file on a free port, is stopped for two seconds and started again mid-flight, then dropped. The
 * shared server is never touched. Making a cluster needs root and Debian's postgresql-common.
 */

const run = promisify(execFile);
const RUNS = 200;
const STEPS = 3;
const DOWN_MS = 2000;
const CLUSTER = `keelfault${process.pid}`;

/** Why this machine cannot make a throwaway cluster, or null when it can. */
function unavailableReason(): string | null {
  if (process.getuid?.() !== 0) return "not running as root, which pg_createcluster needs";
  if (!existsSync("/usr/bin/pg_createcluster")) return "pg_createcluster is not installed";
  if (!existsSync("/etc/postgresql") || readdirSync("/etc/postgresql").length === 0)
    return "no PostgreSQL version under /etc/postgresql";
  return null;
}

const reason = unavailableReason();
if (reason !== null) console.log(`store-outage-restart: skipped, ${reason}`);
const version = reason === null ? readdirSync("/etc/postgresql").sort().at(-1)! : "";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function ctl(action: "start" | "stop") {
  return run("pg_ctlcluster", ["--skip-systemctl-redirect", version, CLUSTER, action]);
}

/** Drop the clusters an earlier run of this file left behind when it was killed before its afterAll. */
async function dropLeftovers(): Promise<void> {
  const { stdout } = await run("pg_lsclusters", ["-h"]);
  for (const line of stdout.split("\n")) {
    const [clusterVersion, name] = line.split(/\s+/);
    const pid = Number(/^keelfault(\d+)$/.exec(name ?? "")?.[1]);
    if (!pid || isAlive(pid)) continue;
    await run("pg_dropcluster", ["--stop", clusterVersion!, name!]).catch(() => {});
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** When the server at `url` first answers a query, polling every 20 ms. */
async function answering(url: string): Promise<number> {
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.query("select 1");
      return performance.now();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await client.end().catch(() => {});
    }
  }
}

let port = 0;

beforeAll(async () => {
  if (reason !== null) return;
  await dropLeftovers();
  port = await freePort();
  await run("pg_createcluster", [
    version,
    CLUSTER,
    "-p",
    String(port),
    "-o",
    "max_connections=250",
    "--",
    "--auth=trust",
  ]);
  await ctl("start");
}, 60_000);

afterAll(async () => {
  if (reason !== null) return;
  await run("pg_dropcluster", ["--stop", version, CLUSTER]).catch((error: Error) => {
    console.log(`store-outage-restart: could not drop cluster ${CLUSTER}: ${error.message}`);
  });
}, 60_000);

describe.skipIf(reason !== null)("the postgres store through a server restart", () => {
  it("finishes every durable run once the server is back, running no finished tool call again", async () => {
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const store = await PostgresSessionManager.open({
      connectionString: url,
      schema: "keel_fault",
      poolSize: 100,
    });
    const executions: Executions = new Map();
    const runtime = await faultRuntime({ store, executions, steps: STEPS, toolDelayMs: 20 });
    try {
      const calmMs = await undisturbedMs(runtime, { count: RUNS, prefix: "calm" });
      executions.clear();
      const runs = startRuns(runtime, { count: RUNS, prefix: "restart" });
      await until(() => executions.size >= RUNS);
      const inFlight = RUNS - runs.finished();
      await ctl("stop");
      await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
      const startingAt = performance.now();
      const starting = ctl("start");
      const restartedAt = await answering(url);
      await starting;
      const finished = await runs.done;
      const recoveryMs = Math.max(...finished.map((one) => one.finishedAt)) - restartedAt;
      const completed = finished.filter((one) => one.result.stopReason === "completed").length;
      console.log(
        `server stopped for ${DOWN_MS} ms and started: ${completed}/${RUNS} runs completed ` +
          `(${inFlight} unfinished at the stop); last run finished ${Math.round(recoveryMs)} ms after the ` +
          `server answered again (${Math.round(restartedAt - startingAt)} ms after it was started); ` +
          `${RUNS} runs take ${Math.round(calmMs)} ms from start to finish without a fault`,
      );
      expect(inFlight).toBeGreaterThan(0);
      await expectAllCompleted({
        results: finished.map((one) => one.result),
        executions,
        store,
        steps: STEPS,
      });
    } finally {
      await runtime.close();
      await store.close();
    }
  }, 60_000);
});
