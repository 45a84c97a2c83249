import { describe, expect, it, vi } from "vitest";
import { registerSessionBuiltins } from "../builtins/builtin-session-managers.js";
import type { RunRecord, RunStatus } from "../contracts/run-types.js";
import { RuntimeEvent } from "../contracts/runtime-event.js";
import { getPlugin } from "../plugins/plugin-registry.js";
import { describeSessionManagerConformance } from "../testing/session-manager-conformance.js";
import { InMemorySessionManager } from "./in-memory-session-manager.js";

describeSessionManagerConformance("in_memory", () => new InMemorySessionManager());

describe("InMemorySessionManager", () => {
  it("keeps appended events by reference", async () => {
    const manager = new InMemorySessionManager();
    const event = new RuntimeEvent("llm.delta", { text: "a" }, 1, "run", "session", "agent", 1);
    await manager.appendEvents("run", [event]);
    expect((await manager.loadEvents("run"))[0]).toBe(event);
  });

  it("applies its default queue size when a scope gives none", async () => {
    const manager = new InMemorySessionManager({ queueSize: 0 });
    let release!: () => void;
    const holder = manager.session("s", () => new Promise<void>((done) => (release = done)));
    await new Promise((done) => setTimeout(done, 1));
    await expect(manager.session("s", async () => 1)).rejects.toMatchObject({ code: "session.queue_full" });
    release();
    await holder;
  });

  it("keeps a session deleted inside its own scope deleted", async () => {
    const manager = new InMemorySessionManager();
    await manager.session("s", async (scope) => {
      scope.state.x = 1;
      await manager.deleteSession("s");
    });
    expect(await manager.listSessions()).toEqual([]);
  });

  it("registers as the in_memory session builtin", async () => {
    registerSessionBuiltins();
    registerSessionBuiltins();
    const definition = getPlugin("session", "in_memory");
    const created = await definition?.create({}, { baseDir: ".", load: async () => undefined as never });
    expect(created).toBeInstanceOf(InMemorySessionManager);
  });
});

describe("InMemorySessionManager retention", () => {
  it("keeps the newest maxRunLogs event logs and every run record", async () => {
    const manager = new InMemorySessionManager({ maxRunLogs: 2 });
    for (const runId of ["r1", "r2", "r3"]) {
      await manager.appendEvents(runId, [
        new RuntimeEvent("run.started", { resumed: false }, 1, runId, "s", "a", 1),
      ]);
    }
    expect(await manager.loadEvents("r1")).toEqual([]);
    expect((await manager.loadEvents("r2")).map((event) => event.runId)).toEqual(["r2"]);
    expect((await manager.loadEvents("r3")).map((event) => event.runId)).toEqual(["r3"]);
    await manager.appendEvents("r2", [
      new RuntimeEvent("run.finished", { result: null }, 2, "r2", "s", "a", 2),
    ]);
    expect((await manager.loadEvents("r2", { afterSequence: 1 })).map((event) => event.kind)).toEqual([
      "run.finished",
    ]);
  });

  it("keeps the logs and run transcripts of runs that may still go on, dropping finished ones first", async () => {
    const manager = new InMemorySessionManager({ maxRunLogs: 2 });
    const record = (runId: string, status: "waiting" | "done") => ({
      runId,
      agentId: "a",
      sessionId: "s",
      status,
      pendingToolCalls: [],
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
      lastSequence: 1,
    });
    await manager.saveRun(record("waiting-run", "waiting"));
    for (const runId of ["waiting-run", "done-1", "done-2"]) {
      if (runId !== "waiting-run") await manager.saveRun(record(runId, "done"));
      await manager.appendEvents(runId, [
        new RuntimeEvent("run.started", { resumed: false }, 1, runId, "s", "a", 1),
      ]);
      await manager.saveRunMessages(runId, 0, [{ role: "user", content: runId }]);
    }
    expect(await manager.loadEvents("waiting-run")).toHaveLength(1);
    expect(await manager.loadRunMessages("waiting-run")).toEqual([{ role: "user", content: "waiting-run" }]);
    expect(await manager.loadEvents("done-1")).toEqual([]);
    expect(await manager.loadRunMessages("done-1")).toEqual([]);
    expect(await manager.loadEvents("done-2")).toHaveLength(1);
  });
});

/** A run record as the runtime saves it, in `status`. */
function runRecord(runId: string, sessionId: string, status: RunStatus): RunRecord {
  return {
    runId,
    agentId: "a",
    sessionId,
    status,
    pendingToolCalls: [],
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
    lastSequence: 1,
  };
}

/** What the runtime stores for one run before its end: its record, then its first event. */
async function startRun(manager: InMemorySessionManager, runId: string, sessionId = `s-${runId}`) {
  await manager.saveRun(runRecord(runId, sessionId, "running"));
  await manager.appendEvents(runId, [
    new RuntimeEvent("run.started", { resumed: false }, 1, runId, sessionId, "a", 1),
  ]);
}

async function hasLog(manager: InMemorySessionManager, runId: string): Promise<boolean> {
  return (await manager.loadEvents(runId)).length > 0;
}

describe("InMemorySessionManager bounds", () => {
  it("drops logs in the order runs finished, once the runs that were open finish", async () => {
    const manager = new InMemorySessionManager({ maxRunLogs: 2 });
    for (const runId of ["a", "b", "c", "d"]) await startRun(manager, runId);
    // Every run is open: none can go, so the store holds more than the limit for now.
    for (const runId of ["a", "b", "c", "d"]) expect(await hasLog(manager, runId)).toBe(true);
    for (const runId of ["c", "a", "d"]) await manager.saveRun(runRecord(runId, `s-${runId}`, "done"));
    // Finishing c and a brought the logs down to the limit, c first; d finished with b still open.
    expect(await hasLog(manager, "c")).toBe(false);
    expect(await hasLog(manager, "a")).toBe(false);
    expect(await hasLog(manager, "b")).toBe(true);
    expect(await hasLog(manager, "d")).toBe(true);
    await startRun(manager, "e");
    expect(await hasLog(manager, "d")).toBe(false);
    expect(await hasLog(manager, "b")).toBe(true);
    expect((await manager.getRun("c"))?.status).toBe("done");
  });

  it("keeps maxRuns records, dropping the first finished with its log and never an open one", async () => {
    const manager = new InMemorySessionManager({ maxRuns: 2 });
    await startRun(manager, "open");
    await manager.saveRun(runRecord("open", "s-open", "waiting"));
    for (const runId of ["x", "y", "z"]) {
      await startRun(manager, runId);
      await manager.saveRun(runRecord(runId, `s-${runId}`, "done"));
    }
    expect((await manager.listRuns()).map((record) => record.runId)).toEqual(["open", "z"]);
    expect(await manager.getRun("x")).toBeNull();
    expect(await hasLog(manager, "y")).toBe(false);
    expect(await hasLog(manager, "open")).toBe(true);
  });

  it("keeps maxSessions sessions, dropping the idlest and never one held or with a run that may go on", async () => {
    const manager = new InMemorySessionManager({ maxSessions: 2 });
    await manager.saveRun(runRecord("r", "waiting", "waiting"));
    await manager.appendMessage("waiting", { role: "user", content: "w" });
    let release!: () => void;
    const held = manager.session("held", () => new Promise<void>((done) => (release = done)));
    await new Promise((done) => setTimeout(done, 1));
    await manager.appendMessage("idle-1", { role: "user", content: "1" });
    await manager.appendMessage("idle-2", { role: "user", content: "2" });
    // Four sessions, two of them pinned: the idle ones went, oldest first, but never the one being written.
    expect(await manager.listSessions()).toEqual(["waiting", "held", "idle-2"]);
    release();
    await held;
    expect(await manager.listSessions()).toEqual(["waiting", "held"]);
    await manager.saveRun(runRecord("r", "waiting", "done"));
    // Its run finished: "waiting" is idle now, and younger than "held".
    await manager.appendMessage("new", { role: "user", content: "n" });
    expect(await manager.listSessions()).toEqual(["waiting", "new"]);
    expect(await manager.loadMessages("waiting")).toEqual([{ role: "user", content: "w" }]);
  });

  it("forgets a session it was told is generated once it has idled for generatedSessionTtlMs", async () => {
    vi.useFakeTimers({ now: 0, toFake: ["Date"] });
    try {
      const manager = new InMemorySessionManager({ generatedSessionTtlMs: 1000 });
      await manager.session("made-up", async () => undefined, { generated: true });
      await manager.session("named", async () => undefined);
      vi.setSystemTime(999);
      await manager.session("later", async () => undefined, { generated: true });
      expect(await manager.listSessions()).toEqual(["made-up", "named", "later"]);
      vi.setSystemTime(1000);
      await manager.session("last", async () => undefined);
      expect(await manager.listSessions()).toEqual(["named", "later", "last"]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("finishes each of many open runs in constant work, not a scan of the runs still open", async () => {
    const manager = new InMemorySessionManager({ maxRunLogs: 100, maxRuns: 100, maxSessions: 100 });
    const runs = 2000;
    const get = vi.spyOn(Map.prototype, "get");
    try {
      for (let index = 0; index < runs; index++) await startRun(manager, `run-${index}`);
      for (let index = 0; index < runs; index++)
        await manager.saveRun(runRecord(`run-${index}`, `s-run-${index}`, "done"));
      // A scan of the open runs on each new log would look up about runs² / 2 = 2,000,000 records.
      expect(get.mock.calls.length).toBeLessThan(runs * 20);
    } finally {
      get.mockRestore();
    }
    expect((await manager.listRuns()).length).toBe(100);
  });
});
