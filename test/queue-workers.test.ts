import { afterAll, describe, expect, it } from "vitest";
import { Runtime } from "../src/runtime/runtime.js";
import { gaplessEvents, readLedger } from "./support/child-processes.js";
import { useBuiltCli } from "./support/cli-process.js";
import { queueCluster, waitForRuns } from "./support/queue-cluster.js";

/**
 * Runs through the BullMQ queue on the real Redis and Postgres, executed by `keel worker` child processes.
 */

useBuiltCli();

describe("keel worker on a bullmq queue", () => {
  const cluster = queueCluster({ steps: 3, tickMs: 5 });
  afterAll(() => cluster.close());

  it("executes 200 submitted runs through 3 workers, each to completed, every tool call once", async () => {
    const workers = await Promise.all([cluster.worker(), cluster.worker(), cluster.worker()]);
    const runtime = await Runtime.fromConfig(cluster.configPath);
    const runIds: string[] = [];
    try {
      for (let index = 0; index < 200; index++)
        runIds.push(await runtime.submit({ agentId: "ticker", inputText: `run ${index}` }));
    } finally {
      await runtime.close();
    }
    const store = await cluster.store();
    await waitForRuns(store, runIds);
    for (const runId of runIds) {
      const record = await store.getRun(runId);
      expect(record).toMatchObject({ status: "done", stopReason: "completed" });
      const events = await gaplessEvents(store, runId);
      expect(events.at(-1)?.result?.finalOutput).toBe("ticked");
    }
    const ledger = readLedger(cluster.ledger).map((line) => line.split(" "));
    expect(ledger).toHaveLength(200 * 3);
    expect(new Set(ledger.map(([runId, callId]) => `${runId} ${callId}`)).size).toBe(200 * 3);
    // Every worker took a share.
    const pids = new Set(ledger.map(([, , pid]) => Number(pid)));
    expect([...pids].sort()).toEqual(workers.map((worker) => worker.pid).sort());
  }, 180_000);
});
