import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime } from "../src/runtime/runtime.js";
import { gaplessEvents, readLedger, waitFor } from "./support/child-processes.js";
import { useBuiltCli } from "./support/cli-process.js";
import { type QueueCluster, queueCluster, waitForRuns } from "./support/queue-cluster.js";
import { throwawayPostgres } from "./support/throwaway-postgres.js";

/**
 * The Postgres server under a batch of queued runs restarts: three `keel worker` processes execute runs from a
 * BullMQ queue (the shared Redis, a key prefix of the test's own) on a throwaway cluster, which is stopped
 * mid-batch and started again. Every run must still end completed, with every event log numbered without a gap.
 */

useBuiltCli();

const RUNS = 48;
const STEPS = 4;
const postgres = throwawayPostgres("queue");
const { reason } = postgres;
if (reason !== null) console.log(`queue-postgres-restart: skipped, ${reason}`);
const clusters: QueueCluster[] = [];

beforeAll(async () => {
  if (reason === null) await postgres.create();
}, 60_000);

afterAll(async () => {
  if (reason !== null) return;
  for (const cluster of clusters)
    await cluster.close().catch((error: Error) => console.log(`queue-postgres-restart: ${error.message}`));
  await postgres.drop();
}, 60_000);

/** What the ledger says: each call's count, and the runs that had made a call. */
function ledgerCalls(ledger: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of readLedger(ledger)) {
    const call = line.split(" ").slice(0, 2).join(" ");
    calls.set(call, (calls.get(call) ?? 0) + 1);
  }
  return calls;
}

const runOf = (call: string) => call.split(" ")[0]!;

/**
 * Submit the batch to three workers, stop the server for `downMs` once a third of the calls are made, start it
 * again, and wait for every run to end. Each run must end completed with a gap-free log; returns the calls made
 * more than once and the runs that had ended before the stop.
 */
async function batchThroughRestart(options: {
  downMs: number;
  storeOutageMs?: number;
  retryDelayMs?: number;
}) {
  const cluster = queueCluster({
    steps: STEPS,
    tickMs: 100,
    pgUrl: postgres.url(),
    ...(options.storeOutageMs === undefined ? {} : { storeOutageMs: options.storeOutageMs }),
    ...(options.retryDelayMs === undefined ? {} : { queue: { retry_delay_ms: options.retryDelayMs } }),
  });
  clusters.push(cluster);
  await Promise.all([cluster.worker(), cluster.worker(), cluster.worker()]);
  const runtime = await Runtime.fromConfig(cluster.configPath);
  const runIds: string[] = [];
  try {
    for (let index = 0; index < RUNS; index++)
      runIds.push(await runtime.submit({ agentId: "ticker", inputText: `run ${index}` }));
  } finally {
    await runtime.close();
  }
  // A third of the batch's calls made: some runs done, some under way, some not yet taken.
  await waitFor(
    () => readLedger(cluster.ledger).length >= (RUNS * STEPS) / 3,
    () => "the workers to make a third of the calls",
  );
  const store = await cluster.store();
  const started = new Set([...ledgerCalls(cluster.ledger).keys()].map(runOf));
  const done = new Set((await store.listRuns({ status: "done" })).map((record) => record.runId));
  const underWay = [...started].filter((runId) => !done.has(runId)).length;
  await postgres.stop();
  await new Promise((resolve) => setTimeout(resolve, options.downMs));
  const starting = postgres.start();
  await postgres.answering();
  const answeredAt = Date.now();
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
  const calls = ledgerCalls(cluster.ledger);
  const repeated = [...calls].filter(([, count]) => count > 1).map(([call]) => call);
  console.log(
    `queue-postgres-restart: server down ${options.downMs} ms, runs wait ` +
      `${options.storeOutageMs ?? "60000 (the default)"} ms for it: ${RUNS - failures.length}/${RUNS} runs completed ` +
      `(${underWay} under way and ${RUNS - started.size} not yet started at the stop); the last run ` +
      `ended ${lastEnd - answeredAt} ms after the server answered again; ${repeated.length} calls made again`,
  );
  expect(underWay).toBeGreaterThan(0);
  expect(failures).toEqual([]);
  // Every call of the batch was made.
  expect(calls.size).toBe(RUNS * STEPS);
  return { repeated, done };
}

describe.skipIf(reason !== null)("a Postgres restart under queued runs", () => {
  it("ends every run completed, each tool call made once, each event log without a gap", async () => {
    const { repeated } = await batchThroughRestart({ downMs: 2000 });
    expect(repeated).toEqual([]);
  }, 180_000);

  it("resumes the runs that stopped waiting for the server, from their checkpoints, once it is back", async () => {
    // The runs give up on the server after half a second; their workers wait for it and the queue tries again.
    // The queue's doubling waits between tries (250, 500, 1000 ms here; 1, 2, 4 s by default) all fit in the
    // outage, so a worker that did not wait would spend every try while the server is down.
    const { repeated, done } = await batchThroughRestart({
      downMs: 3000,
      storeOutageMs: 500,
      retryDelayMs: 250,
    });
    // A call is made again only by a run that stopped under it (finished after the run's last checkpoint): at
    // most one per run, and none in a run that had ended before the stop.
    expect(repeated.filter((call) => done.has(runOf(call)))).toEqual([]);
    expect(new Set(repeated.map(runOf)).size).toBe(repeated.length);
  }, 180_000);
});
