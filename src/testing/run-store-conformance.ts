// The run part of the session-store contract: run records, numbered event logs and run transcripts.
import { describe, expect, it } from "vitest";
import type { Message } from "../contracts/message.js";
import { RuntimeEvent } from "../contracts/runtime-event.js";
import { runRecord, type SessionStoreSuite } from "./session-store-suite.js";

/** Runs: their records, their event logs (a retried batch skipped) and their transcripts. */
export function describeRunStoreCases(suite: SessionStoreSuite): void {
  describe("run records", () => {
    it("saves, gets, lists with filters and updates run records", async () => {
      const [s1, s2] = [suite.id("runs-a"), suite.id("runs-b")];
      const [r1, r2, r3] = [suite.id("run"), suite.id("run"), suite.id("run")];
      const first = runRecord({ runId: r1, sessionId: s1 });
      await suite.manager.saveRun(first);
      await suite.manager.saveRun(
        runRecord({ runId: r2, sessionId: s1, status: "done", stopReason: "completed" }),
      );
      await suite.manager.saveRun(
        runRecord({ runId: r3, sessionId: s2, status: "waiting", lastSequence: 7 }),
      );
      expect(await suite.manager.getRun(r1)).toEqual(first);
      expect(await suite.manager.getRun(suite.id("missing"))).toBeNull();
      expect((await suite.manager.listRuns({ sessionId: s1 })).map((run) => run.runId).sort()).toEqual(
        [r1, r2].sort(),
      );
      expect(
        (await suite.manager.listRuns({ sessionId: s1, status: "done" })).map((run) => run.runId),
      ).toEqual([r2]);
      expect((await suite.manager.listRuns({ status: "waiting" })).map((run) => run.runId)).toContain(r3);
      const ids = (await suite.manager.listRuns()).map((run) => run.runId);
      expect(ids).toEqual(expect.arrayContaining([r1, r2, r3]));

      await suite.manager.saveRun({ ...first, status: "done", stopReason: "failed", lastSequence: 12 });
      expect(await suite.manager.getRun(r1)).toMatchObject({
        status: "done",
        stopReason: "failed",
        lastSequence: 12,
      });
      expect(await suite.manager.listRuns({ sessionId: s1 })).toHaveLength(2);
    });

    it("is not changed by mutating a record after saving or loading it", async () => {
      const runId = suite.id("run");
      const record = runRecord({ runId, sessionId: suite.id("copy") });
      await suite.manager.saveRun(record);
      record.status = "done";
      record.pendingToolCalls.push({
        toolCallId: "c",
        toolId: "t",
        params: {},
        resumeMode: "replay_tool_call",
      });
      const loaded = await suite.manager.getRun(runId);
      expect(loaded).toMatchObject({ status: "running", pendingToolCalls: [] });
      if (loaded) loaded.status = "waiting";
      expect((await suite.manager.getRun(runId))?.status).toBe("running");
    });
  });

  describe("event logs", () => {
    it("appends events and loads them after a sequence", async () => {
      const runId = suite.id("events");
      const sessionId = suite.id("events-session");
      const event = (sequence: number): RuntimeEvent =>
        new RuntimeEvent(
          "step.started",
          { step: sequence },
          1_700_000_000_000 + sequence,
          runId,
          sessionId,
          "agent",
          sequence,
        );
      expect(await suite.manager.loadEvents(runId)).toEqual([]);
      await suite.manager.appendEvents(runId, [event(1), event(2), event(3)]);
      await suite.manager.appendEvents(runId, [event(4), event(5)]);
      await suite.manager.appendEvents(runId, []);
      // A retried batch (after a lost acknowledgement) must not store an event twice.
      await suite.manager.appendEvents(runId, [event(4), event(5)]);
      const all = await suite.manager.loadEvents(runId);
      expect(all.map((entry) => entry.sequence)).toEqual([1, 2, 3, 4, 5]);
      expect(all[0]).toMatchObject({
        kind: "step.started",
        payload: { step: 1 },
        runId,
        sessionId,
        agentId: "agent",
      });
      expect(all[0]?.timestampMs).toBe(1_700_000_000_001);
      const loadAfter = (sequence: number) => suite.manager.loadEvents(runId, { afterSequence: sequence });
      expect((await loadAfter(0)).map((entry) => entry.sequence)).toEqual([1, 2, 3, 4, 5]);
      expect((await loadAfter(3)).map((entry) => entry.sequence)).toEqual([4, 5]);
      expect(await loadAfter(5)).toEqual([]);
      expect(await loadAfter(99)).toEqual([]);
      expect(await suite.manager.loadEvents(suite.id("other-run"))).toEqual([]);
    });
  });

  describe("run transcripts", () => {
    const say = (content: string): Message => ({ role: "user", content });
    const contents = (messages: readonly Message[]) => messages.map((message) => message.content);

    it("appends from 0 and on from the stored length", async () => {
      const runId = suite.id("run-messages");
      const first: Message[] = [
        { role: "system", content: "be brief" },
        { role: "user", content: "add 1 and 2" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }],
        },
      ];
      await suite.manager.saveRunMessages(runId, 0, first);
      expect(await suite.manager.loadRunMessages(runId)).toEqual(first);
      const second: Message[] = [
        { role: "tool", toolCallId: "c1", toolName: "add", content: "3" },
        { role: "assistant", content: "3" },
      ];
      await suite.manager.saveRunMessages(runId, 3, second);
      await suite.manager.saveRunMessages(runId, 5, []);
      expect(await suite.manager.loadRunMessages(runId)).toEqual([...first, ...second]);
    });

    it("replaces the tail from an index inside the stored transcript", async () => {
      const runId = suite.id("run-rewrite");
      await suite.manager.saveRunMessages(runId, 0, [say("a"), say("b"), say("c"), say("d")]);
      // A resumed step rewrites what a crash cut short: fewer messages than were there.
      await suite.manager.saveRunMessages(runId, 2, [say("C")]);
      expect(contents(await suite.manager.loadRunMessages(runId))).toEqual(["a", "b", "C"]);
      // More than were there.
      await suite.manager.saveRunMessages(runId, 1, [say("B"), say("C2"), say("D"), say("E")]);
      expect(contents(await suite.manager.loadRunMessages(runId))).toEqual(["a", "B", "C2", "D", "E"]);
      // No messages at an index inside cuts the transcript there.
      await suite.manager.saveRunMessages(runId, 3, []);
      expect(contents(await suite.manager.loadRunMessages(runId))).toEqual(["a", "B", "C2"]);
      await suite.manager.saveRunMessages(runId, 0, [say("fresh")]);
      expect(contents(await suite.manager.loadRunMessages(runId))).toEqual(["fresh"]);
    });

    it("loads the first `length` messages when given", async () => {
      const runId = suite.id("run-length");
      await suite.manager.saveRunMessages(runId, 0, [say("a"), say("b"), say("c")]);
      expect(contents(await suite.manager.loadRunMessages(runId, { length: 2 }))).toEqual(["a", "b"]);
      expect(await suite.manager.loadRunMessages(runId, { length: 0 })).toEqual([]);
      expect(contents(await suite.manager.loadRunMessages(runId, { length: 3 }))).toEqual(["a", "b", "c"]);
      expect(contents(await suite.manager.loadRunMessages(runId, { length: 10 }))).toEqual(["a", "b", "c"]);
      expect(contents(await suite.manager.loadRunMessages(runId, {}))).toEqual(["a", "b", "c"]);
    });

    it("answers [] for an unknown run", async () => {
      expect(await suite.manager.loadRunMessages(suite.id("no-run"))).toEqual([]);
      expect(await suite.manager.loadRunMessages(suite.id("no-run"), { length: 3 })).toEqual([]);
    });

    it("refuses a gap with store.transcript_gap and keeps what was stored", async () => {
      const runId = suite.id("run-gap");
      await expect(suite.manager.saveRunMessages(runId, 1, [say("x")])).rejects.toMatchObject({
        code: "store.transcript_gap",
      });
      expect(await suite.manager.loadRunMessages(runId)).toEqual([]);
      await suite.manager.saveRunMessages(runId, 0, [say("a"), say("b")]);
      for (const fromIndex of [3, 7, -1, 1.5]) {
        const failure = await suite.manager.saveRunMessages(runId, fromIndex, [say("x"), say("y")]).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failure).toMatchObject({ code: "store.transcript_gap", context: { runId } });
      }
      expect(contents(await suite.manager.loadRunMessages(runId))).toEqual(["a", "b"]);
      await suite.manager.saveRunMessages(runId, 2, [say("c")]);
      expect(contents(await suite.manager.loadRunMessages(runId))).toEqual(["a", "b", "c"]);
    });

    it("keeps runs apart from each other and from session messages", async () => {
      const [r1, r2] = [suite.id("run-a"), suite.id("run-b")];
      const sessionId = suite.id("run-session");
      await suite.manager.appendMessages(sessionId, [say("session")]);
      await suite.manager.saveRunMessages(r1, 0, [say("one"), say("two")]);
      await suite.manager.saveRunMessages(r2, 0, [say("other")]);
      await suite.manager.saveRunMessages(r1, 1, [say("TWO")]);
      expect(contents(await suite.manager.loadRunMessages(r1))).toEqual(["one", "TWO"]);
      expect(contents(await suite.manager.loadRunMessages(r2))).toEqual(["other"]);
      expect(contents(await suite.manager.loadMessages(sessionId))).toEqual(["session"]);
      // Neither a session nor a run record is made or changed by a run's transcript.
      expect(await suite.manager.loadRunMessages(sessionId)).toEqual([]);
      expect(await suite.manager.getRun(r1)).toBeNull();
      await suite.manager.deleteSession(sessionId);
      expect(contents(await suite.manager.loadRunMessages(r1))).toEqual(["one", "TWO"]);
    });

    it("is not changed by mutating the arrays saved or loaded", async () => {
      const runId = suite.id("run-copy");
      const saved = [say("a"), say("b")];
      await suite.manager.saveRunMessages(runId, 0, saved);
      saved.push(say("pushed"));
      saved.length = 0;
      const loaded = await suite.manager.loadRunMessages(runId);
      expect(contents(loaded)).toEqual(["a", "b"]);
      loaded.push(say("c"));
      loaded.splice(0, 1);
      const partial = await suite.manager.loadRunMessages(runId, { length: 1 });
      partial.push(say("more"));
      expect(contents(await suite.manager.loadRunMessages(runId))).toEqual(["a", "b"]);
    });
  });
}
