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
import { throwawayPostgres } from "./support/throwaway-postgres.js";

/**
 * 200 durable runs on the postgres store while its server really goes down: a throwaway cluster of its own,
 * made for this file on a free port, is stopped for two seconds and started again mid-flight, then dropped. The
 * shared server is never touched. Making a cluster needs root and Debian's postgresql-common.
 */

const RUNS = 200;
const STEPS = 3;
const DOWN_MS = 2000;
const cluster = throwawayPostgres("restart");
const { reason } = cluster;
if (reason !== null) console.log(`store-outage-restart: skipped, ${reason}`);

beforeAll(async () => {
  if (reason === null) await cluster.create();
}, 60_000);

afterAll(async () => {
  if (reason === null) await cluster.drop();
}, 60_000);

describe.skipIf(reason !== null)("the postgres store through a server restart", () => {
  it("finishes every durable run once the server is back, running no finished tool call again", async () => {
    const url = cluster.url();
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
      await cluster.stop();
      await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
      const startingAt = performance.now();
      const starting = cluster.start();
      const restartedAt = await cluster.answering();
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
