import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresSessionManager } from "../src/stores/postgres/index.js";
import { resolveConnectionString } from "../src/stores/postgres/resolve-connection-string.js";
import {
  CuttableProxy,
  type Executions,
  expectAllCompleted,
  faultRuntime,
  startRuns,
  undisturbedMs,
  until,
} from "./support/store-faults.js";

/**
 * 200 durable runs on the postgres store while the connection to the server is cut for over two seconds: a
 * proxy between Keel and the shared server drops every connection and refuses new ones, then lets them through
 * again. The shared server itself is never touched.
 */

const SCHEMA = `keel_outage_proxy_${process.pid}`;
const RUNS = 200;
const STEPS = 3;
const CUT_MS = 2500;

let proxy: CuttableProxy;
let admin: pg.Pool;

beforeAll(async () => {
  const url = new URL(resolveConnectionString());
  admin = new pg.Pool({ connectionString: url.toString(), max: 1 });
  proxy = await CuttableProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
});

afterAll(async () => {
  await proxy.close();
  await admin.query(`drop schema if exists ${SCHEMA} cascade`);
  await admin.end();
});

describe("the postgres store through a cut connection", () => {
  it("finishes every durable run once the connection is back, running no finished tool call again", async () => {
    const url = new URL(resolveConnectionString());
    url.host = `127.0.0.1:${proxy.port}`;
    const store = await PostgresSessionManager.open({
      connectionString: url.toString(),
      schema: SCHEMA,
      poolSize: 20,
    });
    const executions: Executions = new Map();
    const runtime = await faultRuntime({ store, executions, steps: STEPS, toolDelayMs: 20 });
    try {
      const calmMs = await undisturbedMs(runtime, { count: RUNS, prefix: "calm" });
      executions.clear();
      const runs = startRuns(runtime, { count: RUNS, prefix: "cut" });
      await until(() => executions.size >= RUNS);
      proxy.cut();
      const inFlight = RUNS - runs.finished();
      await new Promise((resolve) => setTimeout(resolve, CUT_MS));
      proxy.restore();
      const restoredAt = performance.now();
      const finished = await runs.done;
      const recoveryMs = Math.max(...finished.map((run) => run.finishedAt)) - restoredAt;
      const completed = finished.filter((run) => run.result.stopReason === "completed").length;
      console.log(
        `connection cut for ${CUT_MS} ms: ${completed}/${RUNS} runs completed (${inFlight} unfinished at the cut); ` +
          `last run finished ${Math.round(recoveryMs)} ms after the connection was back ` +
          `(${RUNS} runs take ${Math.round(calmMs)} ms from start to finish without a cut)`,
      );
      expect(inFlight).toBeGreaterThan(0);
      await expectAllCompleted({
        results: finished.map((run) => run.result),
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
