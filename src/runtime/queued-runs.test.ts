import { describe, expect, it } from "vitest";
import type { RunRequest, RunResult } from "../contracts/run-types.js";
import { KeelError } from "../errors/keel-error.js";
import { InMemorySessionManager } from "../sessions/in-memory-session-manager.js";
import { newRunRecord } from "./execute-request.js";
import { executeQueuedRun, type QueuedRunHost } from "./queued-runs.js";

const lost = () => new KeelError("connection lost", { code: "store.connection", retryable: true });

describe("executeQueuedRun", () => {
  it("waits for a store that is away when the run is taken, instead of spending the run's try", async () => {
    const store = new InMemorySessionManager();
    const run = { kind: "start" as const, runId: "r1", agentId: "a", sessionId: "s1", inputText: "go" };
    await store.saveRun(newRunRecord(run));
    const getRun = store.getRun.bind(store);
    let failures = 2;
    store.getRun = async (runId) => {
      if (failures-- > 0) throw lost();
      return getRun(runId);
    };
    const started: RunRequest[] = [];
    const host: QueuedRunHost = {
      store,
      fanout: undefined,
      start: async (request) => {
        started.push(request);
        const record = await getRun(request.runId!);
        await store.saveRun({ ...record!, status: "done", stopReason: "completed" });
        return {} as RunResult;
      },
      cancelledBefore: async () => undefined,
      decide: async () => ({}) as RunResult,
    };
    await executeQueuedRun(host, run, { attempt: 1, maxAttempts: 3 });
    expect(failures).toBeLessThan(0);
    expect(started.map((request) => request.runId)).toEqual(["r1"]);
  });
});
