import { afterAll, describe, expect, it } from "vitest";
import { gaplessEvents, readLedger, waitFor } from "./support/child-processes.js";
import { useBuiltCli } from "./support/cli-process.js";
import { queueCluster, waitForRuns } from "./support/queue-cluster.js";
import { idsOf, readSse, type SseRead } from "./support/sse-client.js";

/**
 * Two `keel serve` nodes and `keel worker` processes on one BullMQ queue and one Postgres store: a run started
 * through one node executes on a worker, its events reach a stream client on the other node through Redis, and
 * decisions made through either node are applied by whichever worker takes them.
 */

useBuiltCli();

const json = { "content-type": "application/json" };

async function startRun(url: string): Promise<string> {
  const started = await fetch(`${url}/runs`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ agentId: "ticker", inputText: "tick" }),
  });
  expect(started.status).toBe(202);
  return ((await started.json()) as { runId: string }).runId;
}

describe("server nodes and workers", () => {
  const cluster = queueCluster({ steps: 8, tickMs: 120 });
  afterAll(() => cluster.close());

  it("streams a run executing on a worker to a client on the other node, and re-attaches across nodes", async () => {
    const [node1, node2] = await Promise.all([cluster.server(), cluster.server()]);
    await cluster.worker();
    const runId = await startRun(node1.url);

    // Read on node 2 until a few tools have finished, leave, and come back on node 1 from the last id.
    const first = await readSse(
      await fetch(`${node2.url}/runs/${runId}/events`),
      (read) => read.events.filter((event) => event.event === "tool.finished").length === 3,
    );
    expect(first.events.some((event) => event.event === "run.finished")).toBe(false);
    const second = await readSse(
      await fetch(`${node1.url}/runs/${runId}/events`, {
        headers: { "last-event-id": String(idsOf(first).at(-1)) },
      }),
    );
    const ids = [...idsOf(first), ...idsOf(second)];
    expect(ids).toEqual(ids.map((_, index) => index + 1));
    const finished = second.events.at(-1)!;
    expect(finished.event).toBe("run.finished");
    expect(JSON.parse(finished.data).result).toMatchObject({
      stopReason: "completed",
      finalOutput: "ticked",
    });

    // What the client saw is the store's log, event for event.
    const store = await cluster.store();
    await waitForRuns(store, [runId]);
    const stored = await gaplessEvents(store, runId);
    const seen = [...first.events, ...second.events];
    expect(seen.map((event) => Number(event.id))).toEqual(stored.map((event) => event.sequence));
    const kinds = stored.map((event) =>
      event.kind === "tool.completed" || event.kind === "tool.failed" ? "tool.finished" : event.kind,
    );
    expect(seen.map((event) => event.event)).toEqual(kinds);
  }, 90_000);
});

describe("a non-idempotent call caught by a worker's death", () => {
  const cluster = queueCluster({ steps: 3, tickMs: 600, nonIdempotent: true });
  afterAll(() => cluster.close());

  it("is reported as an unknown outcome, decided through the other node, and the run finishes on a worker", async () => {
    const [node1, node2] = await Promise.all([cluster.server(), cluster.server()]);
    const doomed = await cluster.worker({ concurrency: 1 });
    const runId = await startRun(node1.url);
    await waitFor(
      () => readLedger(cluster.ledger).length === 2,
      () => "the second tool call to start",
    );
    doomed.kill("SIGKILL");
    await doomed.done;
    await cluster.worker({ concurrency: 1 });
    const store = await cluster.store();
    let record = await store.getRun(runId);
    while (record?.status !== "waiting") {
      await new Promise((resolve) => setTimeout(resolve, 100));
      record = await store.getRun(runId);
    }
    const events = await store.loadEvents(runId);
    const unknown = events.find((event) => event.kind === "tool.outcome_unknown");
    expect(unknown).toBeDefined();
    const toolCallId = String(unknown!.payload.toolCallId);
    // The call was not run again: the ledger still has its one line.
    expect(readLedger(cluster.ledger).filter((line) => line.includes(` ${toolCallId} `))).toHaveLength(1);

    // A client on node 1 follows the waiting run; the decision goes through node 2.
    let followed: SseRead = { events: [], comments: [], ended: false };
    const following = readSse(
      await fetch(`${node1.url}/runs/${runId}/events`, {
        headers: { "last-event-id": String(record.lastSequence) },
      }),
      (read) => {
        followed = read;
        return false;
      },
    );
    const decided = await fetch(`${node2.url}/runs/${runId}/decisions`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ decisions: [{ toolCallId, action: "result", value: 1 }] }),
    });
    expect(decided.status).toBe(200);
    expect(await decided.json()).toMatchObject({ stopReason: "completed", finalOutput: "ticked" });
    followed = await following;
    expect(followed.events.some((event) => event.event === "tool.decision")).toBe(true);
    expect(followed.events.at(-1)?.event).toBe("run.finished");
    expect(idsOf(followed)).toEqual(idsOf(followed).map((_, index) => record!.lastSequence + index + 1));
    // The live tail is ahead of the store: the worker stores the run's end right after it streams it.
    await waitForRuns(store, [runId]);
    expect(await store.getRun(runId)).toMatchObject({ status: "done", stopReason: "completed" });
    await gaplessEvents(store, runId);
  }, 90_000);
});

describe("cancelling through any node", () => {
  const cluster = queueCluster({ steps: 8, tickMs: 150 });
  afterAll(() => cluster.close());

  it("cancels a queued run before a worker takes it, and a running one on its worker", async () => {
    const [node1, node2] = await Promise.all([cluster.server(), cluster.server()]);
    const store = await cluster.store();
    const cancel = (url: string, runId: string) =>
      fetch(`${url}/runs/${runId}/cancel`, { method: "POST", headers: json, body: "{}" });

    // No worker yet: the run waits in the queue, and starts cancelled when one takes it.
    const queued = await startRun(node1.url);
    const answered = await cancel(node2.url, queued);
    expect(await answered.json()).toEqual({ runId: queued, cancelled: true });
    await cluster.worker();
    await waitForRuns(store, [queued]);
    expect(await store.getRun(queued)).toMatchObject({ status: "done", stopReason: "cancelled" });
    expect(readLedger(cluster.ledger).filter((line) => line.startsWith(queued))).toEqual([]);

    // Running on the worker: node 2 asks, the worker cancels it, node 1's stream ends with the cancellation.
    const running = await startRun(node1.url);
    let asked = false;
    const read = await readSse(await fetch(`${node1.url}/runs/${running}/events`), (sofar) => {
      if (!asked && sofar.events.some((event) => event.event === "tool.finished")) {
        asked = true;
        void cancel(node2.url, running);
      }
      return false;
    });
    const finished = read.events.at(-1)!;
    expect(finished.event).toBe("run.finished");
    expect(JSON.parse(finished.data).result).toMatchObject({ stopReason: "cancelled" });
    await waitForRuns(store, [running]);
    expect(await store.getRun(running)).toMatchObject({ status: "done", stopReason: "cancelled" });
    expect(readLedger(cluster.ledger).filter((line) => line.startsWith(running)).length).toBeLessThan(8);
  }, 90_000);
});
