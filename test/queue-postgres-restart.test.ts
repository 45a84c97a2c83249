import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime } from "../src/runtime/runtime.js";
import { gaplessEvents, readLedger, waitFor } from "./support/child-processes.js";
import { useBuiltCli } from "./support/cli-process.js";
import { type QueueCluster, queueCluster, waitForRuns } from "./support/queue-cluster.js";
import { throwawayPostgres } from "./support/throwaway-postgres.js";

/**
 * The Postgres server under a batch of queued runs restarts: three `keel worker` processes execute runs from a
 * BullMQ queue (the shared Redis, a key prefix of the test's own) on a throwaway cluster, which is stopped for
 * two seconds mid-batch and started again. Every run must still end completed, with every tool call made once
 * and every run's event log numbered without a gap.
 */

useBuiltCli();

const RUNS = 48;
const STEPS = 4;
const DOWN_MS = 2000;
const postgres = throwawayPostgres("queue");
const { reason } = postgres;
if (reason !== null) console.log(`queue-postgres-restart: skipped, ${reason}`);

let cluster: QueueCluster | undefined;

beforeAll(async () => {
  if (reason !== null) return;
  await postgres.create();
  cluster = queueCluster({ steps: STEPS, tickMs: 100, pgUrl: postgres.url() });
}, 60_000);

afterAll(async () => {
  if (reason !== null) return;
  await cluster?.close().catch((error: Error) => console.log(`queue-postgres-restart: ${error.message}`));
  await postgres.drop();
}, 60_000);

/** The runs that have made at least one call, by the ledger. */
function callsByRun(ledger: string): Set<string> {
  return new Set(readLedger(ledger).map((line) => line.split(" ")[0]!));
}

describe.skipIf(reason !== null)("a Postgres restart under queued runs", () => {
  it("ends every run completed, each tool call made once, each event log without a gap", async () => {
    const queued = cluster!;
    await Promise.all([queued.worker(), queued.worker(), queued.worker()]);
    const runtime = await Runtime.fromConfig(queued.configPath);
    const runIds: string[] = [];
    try {
      for (let index = 0; index < RUNS; index++)
        runIds.push(await runtime.submit({ agentId: "ticker", inputText: `run ${index}` }));
    } finally {
      await runtime.close();
    }
    // A third of the batch's calls made: some runs done, some mid-way, some not yet taken.
    await waitFor(
      () => readLedger(queued.ledger).length >= (RUNS * STEPS) / 3,
      () => "the workers to make a third of the calls",
    );
    const store = await queued.store();
    const started = callsByRun(queued.ledger).size;
    const unfinished = started - (await store.listRuns({ status: "done" })).length;
    await postgres.stop();
    await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
    const starting = postgres.start();
    const answeredAt = await postgres.answering();
    const answeredAtMs = Date.now();
    await starting;

    await waitForRuns(store, runIds);
    const failures: string[] = [];
    let lastEnd = 0;
    for (const runId of runIds) {
      const record = await store.getRun(runId);
      if (record?.stopReason !== "completed") failures.push(`${runId}: ${record?.stopReason}`);
      lastEnd = Math.max(lastEnd, Date.parse(record?.updatedAt ?? ""));
      const events = await gaplessEvents(store, runId);
      expect(events.at(-1)?.result?.finalOutput).toBe("ticked");
    }
    console.log(
      `queue-postgres-restart: ${RUNS - failures.length}/${RUNS} runs completed (${unfinished} under way and ` +
        `${RUNS - started} not yet started at the stop); the server was down ${DOWN_MS} ms and the last ` +
        `run ended ${lastEnd - answeredAtMs} ms after it answered again ` +
        `(${Math.round(performance.now() - answeredAt)} ms until the test saw every run done)`,
    );
    expect(unfinished).toBeGreaterThan(0);
    expect(failures).toEqual([]);
    // No call was made twice: the ledger has each of the batch's calls exactly once.
    const ledger = readLedger(queued.ledger).map((line) => line.split(" ").slice(0, 2).join(" "));
    expect(ledger).toHaveLength(RUNS * STEPS);
    expect(new Set(ledger).size).toBe(RUNS * STEPS);
  }, 180_000);
});
