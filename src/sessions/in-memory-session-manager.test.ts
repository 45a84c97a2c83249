import { describe, expect, it } from "vitest";
import { registerSessionBuiltins } from "../builtins/builtin-session-managers.js";
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
