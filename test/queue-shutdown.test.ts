import { afterAll, describe, expect, it } from "vitest";
import { Runtime } from "../src/runtime/runtime.js";
import { gaplessEvents, readLedger, waitFor } from "./support/child-processes.js";
import { useBuiltCli } from "./support/cli-process.js";
import { queueCluster, waitForRuns } from "./support/queue-cluster.js";

/**
 * SIGTERM to `keel worker`: it takes no more runs, lets the runs in flight go on for its grace period, and hands
 * the rest back to the queue, where another worker resumes them at once rather than after a lease runs out.
 */

useBuiltCli();

describe("keel worker on SIGTERM", () => {
  const cluster = queueCluster({ steps: 6, tickMs: 200 });
  afterAll(() => cluster.close());

  it("finishes what fits in the grace period and hands the rest back, losing nothing", async () => {
    const leaving = await cluster.worker({ concurrency: 2, graceMs: 300 });
    const runtime = await Runtime.fromConfig(cluster.configPath);
    const runIds: string[] = [];
    try {
      for (let index = 0; index < 4; index++)
        runIds.push(await runtime.submit({ agentId: "ticker", inputText: `run ${index}` }));
    } finally {
      await runtime.close();
    }
    await waitFor(
      () => readLedger(cluster.ledger).length >= 2,
      () => "the worker to start its runs",
    );
    leaving.kill("SIGTERM");
    await leaving.done;
    expect(leaving.code).toBe(0);
    expect(leaving.stdout).toMatch(/stopped; [12] run\(s\) handed back to the queue/);
    const leftAt = readLedger(cluster.ledger).length;

    const staying = await cluster.worker({ concurrency: 2 });
    const store = await cluster.store();
    await waitForRuns(store, runIds);
    for (const runId of runIds) {
      expect(await store.getRun(runId)).toMatchObject({ status: "done", stopReason: "completed" });
      await gaplessEvents(store, runId);
    }
    const ledger = readLedger(cluster.ledger).map((line) => line.split(" "));
    // The leaving worker took only the runs it had when it was told to stop.
    const leavingRuns = new Set(ledger.filter(([, , pid]) => pid === String(leaving.pid)).map(([id]) => id));
    expect(leavingRuns.size).toBe(2);
    expect(ledger.slice(leftAt).every(([, , pid]) => pid === String(staying.pid))).toBe(true);
    expect(new Set(ledger.map(([runId, callId]) => `${runId} ${callId}`)).size).toBe(4 * 6);
  }, 90_000);
});
