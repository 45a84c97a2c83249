import { describe, expect, it } from "vitest";
import type { RunRecord } from "../contracts/run-types.js";
import { RuntimeEvent } from "../contracts/runtime-event.js";
import { FinishedEventLog } from "./finished-event-log.js";
import { InMemorySessionManager } from "./in-memory-session-manager.js";

function eventsOf(runId: string, kinds: string[], first = 1): RuntimeEvent[] {
  return kinds.map(
    (kind, index) =>
      new RuntimeEvent(kind, { index }, 1000 + index, runId, "session", "agent", first + index),
  );
}

function record(runId: string, status: RunRecord["status"]): RunRecord {
  return {
    runId,
    agentId: "agent",
    sessionId: "session",
    status,
    pendingToolCalls: [],
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
    lastSequence: 0,
  };
}

describe("FinishedEventLog", () => {
  it("gives back equal events with the same payload objects, from any sequence", () => {
    const events = eventsOf("run", ["run.started", "step.started", "run.finished"], 5);
    const log = FinishedEventLog.of(events)!;
    expect(log.length).toBe(3);
    expect(log.lastSequence).toBe(7);
    const all = log.events();
    expect(all).toEqual(events);
    expect(all.every((event) => event instanceof RuntimeEvent)).toBe(true);
    expect(all[1]!.payload).toBe(events[1]!.payload);
    expect(log.events(5).map((event) => event.sequence)).toEqual([6, 7]);
    expect(log.events(0)).toEqual(events);
    expect(log.events(7)).toEqual([]);
    expect(log.events(99)).toEqual([]);
  });

  it("refuses logs that do not fit columns", () => {
    const gap = eventsOf("run", ["a", "b"]);
    gap.push(new RuntimeEvent("c", {}, 1, "run", "session", "agent", 9));
    expect(FinishedEventLog.of(gap)).toBeNull();
    const twoRuns = [...eventsOf("one", ["a"]), ...eventsOf("two", ["b"], 2)];
    expect(FinishedEventLog.of(twoRuns)).toBeNull();
    expect(FinishedEventLog.of([])).toBeNull();
  });

  it("gives each log its own kinds whatever the log before had (same length, differing at the end or start)", () => {
    const kindLists = [
      ["run.started", "step.started", "run.finished"],
      ["run.started", "step.started", "run.finished"],
      ["run.started", "step.started", "run.failed"],
      ["run.resumed", "step.started", "run.failed"],
      ["run.started", "step.started", "run.finished"],
      ["run.started", "step.started"],
    ];
    for (const [index, kinds] of kindLists.entries()) {
      const events = eventsOf(`run-${index}`, kinds);
      if (index === 3) expect(FinishedEventLog.of([...events, ...eventsOf("other", ["x"], 4)])).toBeNull();
      const log = FinishedEventLog.of(events)!;
      expect(log.events().map((event) => event.kind)).toEqual(kinds);
      expect(log.events()).toEqual(events);
    }
  });
});

describe("InMemorySessionManager with finished runs", () => {
  it("keeps a done run's events in columns and gives them back equal", async () => {
    const manager = new InMemorySessionManager();
    const events = eventsOf("run", ["run.started", "llm.called", "run.finished"]);
    await manager.saveRun(record("run", "running"));
    await manager.appendEvents("run", events);
    expect((await manager.loadEvents("run"))[0]).toBe(events[0]);
    await manager.saveRun(record("run", "done"));
    const loaded = await manager.loadEvents("run");
    expect(loaded).toEqual(events);
    expect(loaded[0]).not.toBe(events[0]);
    expect(loaded[2]!.payload).toBe(events[2]!.payload);
    expect(await manager.loadEvents("run", { afterSequence: 2 })).toEqual([events[2]]);
  });

  it("appends to a done run's log without doubling a retried batch", async () => {
    const manager = new InMemorySessionManager();
    const events = eventsOf("run", ["a", "b", "c", "d"]);
    await manager.saveRun(record("run", "done"));
    await manager.appendEvents("run", events.slice(0, 2));
    await manager.appendEvents("run", events.slice(1));
    expect(await manager.loadEvents("run")).toEqual(events);
  });
});
