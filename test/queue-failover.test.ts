import { afterAll, describe, expect, it } from "vitest";
import { Runtime } from "../src/runtime/runtime.js";
import { gaplessEvents, readLedger, waitFor } from "./support/child-processes.js";
import { useBuiltCli } from "./support/cli-process.js";
import { queueCluster, waitForRuns } from "./support/queue-cluster.js";

/**
 * Failover on the BullMQ queue: a `keel worker` killed with SIGKILL in the middle of tool calls stops renewing
 * its leases, and another worker takes its runs over and resumes each from its latest checkpoint.
 */

useBuiltCli();

async function submitAll(configPath: string, count: number): Promise<string[]> {
  const runtime = await Runtime.fromConfig(configPath);
  try {
    const runIds: string[] = [];
    for (let index = 0; index < count; index++)
      runIds.push(await runtime.submit({ agentId: "ticker", inputText: `run ${index}` }));
    return runIds;
  } finally {
    await runtime.close();
  }
}

describe("a worker killed mid-tool", () => {
  const cluster = queueCluster({ steps: 5, tickMs: 150 });
  afterAll(() => cluster.close());

  it("loses nothing: its runs finish on another worker and each tool call's effect is recorded once", async () => {
    const doomed = await cluster.worker({ concurrency: 4 });
    const runIds = await submitAll(cluster.configPath, 12);
    // Let the doomed worker get into its runs' tool calls, then kill it under them.
    await waitFor(
      () => readLedger(cluster.ledger).filter((line) => line.endsWith(` ${doomed.pid}`)).length >= 6,
      () => "the first worker to start tool calls",
    );
    doomed.kill("SIGKILL");
    await doomed.done;
    const killedAt = readLedger(cluster.ledger).length;
    const survivor = await cluster.worker({ concurrency: 4 });
    const store = await cluster.store();
    await waitForRuns(store, runIds);

    for (const runId of runIds) {
      expect(await store.getRun(runId)).toMatchObject({ status: "done", stopReason: "completed" });
      const events = await gaplessEvents(store, runId);
      expect(events.at(-1)?.result?.finalOutput).toBe("ticked");
      expect(events.filter((event) => event.kind === "tool.completed")).toHaveLength(5);
    }
    const ledger = readLedger(cluster.ledger).map((line) => line.split(" "));
    const byCall = new Map<string, string[]>();
    for (const [runId, callId, pid] of ledger) {
      const key = `${runId} ${callId}`;
      byCall.set(key, [...(byCall.get(key) ?? []), pid!]);
    }
    // Every call's effect is there, keyed by its call id: exactly the calls the runs made.
    expect(byCall.size).toBe(12 * 5);
    // A call was executed again only when it was in flight on the killed worker: started there, never finished.
    const repeated = [...byCall.values()].filter((pids) => pids.length > 1);
    expect(repeated.length).toBeLessThanOrEqual(4);
    for (const pids of repeated) expect(pids).toEqual([String(doomed.pid), String(survivor.pid)]);
    // The killed worker's runs were taken over: some runs have calls from both workers.
    const takenOver = runIds.filter((runId) => {
      const pids = new Set(ledger.filter(([id]) => id === runId).map(([, , pid]) => pid));
      return pids.has(String(doomed.pid)) && pids.has(String(survivor.pid));
    });
    expect(takenOver.length).toBeGreaterThan(0);
    expect(killedAt).toBeLessThan(ledger.length);
  }, 120_000);
});

describe("a run that keeps killing its workers", () => {
  const cluster = queueCluster({ steps: 3, tickMs: 400, queue: { attempts: 2 } });
  afterAll(() => cluster.close());

  it("is parked as failed after its tries, with the error, not retried forever", async () => {
    const [runId] = await submitAll(cluster.configPath, 1);
    const store = await cluster.store();
    for (let attempt = 1; attempt <= 2; attempt++) {
      const worker = await cluster.worker({ concurrency: 1 });
      await waitFor(
        () => readLedger(cluster.ledger).some((line) => line.endsWith(` ${worker.pid}`)),
        () => `worker ${attempt} to start a tool call`,
      );
      worker.kill("SIGKILL");
      await worker.done;
    }
    await cluster.worker({ concurrency: 1 });
    await waitForRuns(store, [runId!]);
    const record = await store.getRun(runId!);
    expect(record).toMatchObject({ status: "done", stopReason: "failed" });
    const events = await gaplessEvents(store, runId!);
    const failed = events.find((event) => event.kind === "run.failed");
    expect(failed?.payload.errorDetails).toMatchObject({ code: "run.attempts_exhausted" });
    expect(String(failed?.payload.error)).toContain("stopped renewing its lease");
  }, 120_000);
});
