// The checkpoint part of the session-store contract, with the one-write commit of stores that have it.
import { describe, expect, it, type TestContext } from "vitest";
import type { Message } from "../contracts/message.js";
import { RuntimeEvent } from "../contracts/runtime-event.js";
import {
  type CheckpointCommit,
  type CheckpointCommitter,
  isCheckpointCommitter,
  SESSION_SCHEMA_VERSION,
  type SessionManager,
} from "../sessions/session-manager.js";
import { checkpoint, type SessionStoreSuite } from "./session-store-suite.js";

/** Checkpoints: stored, replaced in place, listed in order; and `commitCheckpoint` where a store has it. */
export function describeCheckpointStoreCases(suite: SessionStoreSuite): void {
  describe("checkpoints", () => {
    it("creates, loads and lists checkpoints with a schema version", async () => {
      const sessionId = suite.id("checkpoints");
      expect(await suite.manager.listCheckpoints(sessionId)).toEqual([]);
      const state = { transcript: [{ role: "user", content: "hi" }], step: 1 };
      const created = await suite.manager.createCheckpoint(sessionId, checkpoint("run-1:step:1", state, 1));
      expect(created.schemaVersion).toBe(SESSION_SCHEMA_VERSION);
      expect(Number.isNaN(Date.parse(created.createdAt))).toBe(false);
      await suite.manager.createCheckpoint(sessionId, checkpoint("run-1:step:2", { ...state, step: 2 }, 3));
      const loaded = await suite.manager.loadCheckpoint(sessionId, "run-1:step:1");
      expect(loaded).toMatchObject({
        schemaVersion: SESSION_SCHEMA_VERSION,
        checkpointId: "run-1:step:1",
        state,
        transcriptLength: 1,
        artifactCount: 0,
        createdAt: created.createdAt,
      });
      expect(await suite.manager.listCheckpoints(sessionId)).toEqual(["run-1:step:1", "run-1:step:2"]);
    });

    it("replaces a checkpoint created again with the same id, keeping its place", async () => {
      const sessionId = suite.id("checkpoint-again");
      await suite.manager.createCheckpoint(sessionId, checkpoint("a", { step: 1 }, 1));
      await suite.manager.createCheckpoint(sessionId, checkpoint("b", { step: 2 }, 2));
      await suite.manager.createCheckpoint(sessionId, checkpoint("a", { step: 1, retried: true }, 1));
      expect(await suite.manager.listCheckpoints(sessionId)).toEqual(["a", "b"]);
      expect((await suite.manager.loadCheckpoint(sessionId, "a"))?.state).toEqual({ step: 1, retried: true });
    });

    it("answers null for an unknown checkpoint id", async () => {
      const sessionId = suite.id("no-checkpoint");
      expect(await suite.manager.loadCheckpoint(sessionId, "missing")).toBeNull();
      await suite.manager.createCheckpoint(sessionId, checkpoint("present"));
      expect(await suite.manager.loadCheckpoint(sessionId, "missing")).toBeNull();
      expect(await suite.manager.loadCheckpoint(suite.id("other"), "present")).toBeNull();
    });
  });

  // Only for stores with the optional `commitCheckpoint` ability (CheckpointCommitter): the tests of a store
  // without it are skipped, since the run loop then makes the three separate calls tested above.
  describe("checkpoint commits (stores with commitCheckpoint only)", () => {
    const say = (content: string): Message => ({ role: "user", content });
    const contents = (messages: readonly Message[]) => messages.map((message) => message.content);
    /** The run a commit is for: the session it belongs to and its own id. */
    type RunOf = Pick<CheckpointCommit, "sessionId" | "runId">;
    const event = (run: RunOf, sequence: number, payload = {}): RuntimeEvent =>
      new RuntimeEvent(
        "step.started",
        { step: sequence, ...payload },
        1_700_000_000_000 + sequence,
        run.runId,
        run.sessionId,
        "agent",
        sequence,
      );
    const committer = (context: TestContext): SessionManager & CheckpointCommitter => {
      if (!isCheckpointCommitter(suite.manager)) context.skip();
      return suite.manager as SessionManager & CheckpointCommitter;
    };
    /** What a run's stored data looks like, the checkpoints' creation times left out. */
    const stored = async (sessionId: string, runId: string) => ({
      events: (await suite.manager.loadEvents(runId)).map(({ kind, payload, sequence, timestampMs }) => ({
        kind,
        payload,
        sequence,
        timestampMs,
      })),
      messages: await suite.manager.loadRunMessages(runId),
      checkpointIds: await suite.manager.listCheckpoints(sessionId),
      checkpoints: await Promise.all(
        (await suite.manager.listCheckpoints(sessionId)).map(async (checkpointId) => {
          const { createdAt: _, ...rest } =
            (await suite.manager.loadCheckpoint(sessionId, checkpointId)) ?? {};
          return rest;
        }),
      ),
    });

    it("stores events, messages and the checkpoint as the three separate calls would", async (context) => {
      const store = committer(context);
      const [viaCommit, viaCalls] = [
        { sessionId: suite.id("commit-session"), runId: suite.id("commit-run") },
        { sessionId: suite.id("calls-session"), runId: suite.id("calls-run") },
      ];
      // The same history written both ways: events (a retried one among them), a rewritten tail, a checkpoint
      // created twice.
      const steps = (run: RunOf) => [
        {
          events: [event(run, 1), event(run, 2)],
          messages: { fromIndex: 0, items: [say("a"), say("b"), say("c")] },
          checkpoint: checkpoint("cp-1", { step: 1 }, 3),
        },
        {
          // Sequence 2 again, with another payload: stored already, so skipped; 3 and 4 are new.
          events: [event(run, 2, { retried: true }), event(run, 3), event(run, 4)],
          messages: { fromIndex: 2, items: [say("C"), say("d")] },
          checkpoint: checkpoint("cp-2", { step: 2 }, 4),
        },
        {
          events: [],
          messages: { fromIndex: 4, items: [] },
          checkpoint: checkpoint("cp-1", { step: 1, again: true }, 4),
        },
      ];
      for (const step of steps(viaCommit)) {
        const committed = await store.commitCheckpoint({ ...viaCommit, ...step });
        expect(committed).toMatchObject({ ...step.checkpoint, schemaVersion: SESSION_SCHEMA_VERSION });
        expect(await suite.manager.loadCheckpoint(viaCommit.sessionId, step.checkpoint.checkpointId)).toEqual(
          committed,
        );
      }
      for (const step of steps(viaCalls)) {
        await suite.manager.appendEvents(viaCalls.runId, step.events);
        await suite.manager.saveRunMessages(viaCalls.runId, step.messages.fromIndex, step.messages.items);
        await suite.manager.createCheckpoint(viaCalls.sessionId, step.checkpoint);
      }
      const committed = await stored(viaCommit.sessionId, viaCommit.runId);
      expect(committed).toEqual(await stored(viaCalls.sessionId, viaCalls.runId));
      expect(committed.events.map((entry) => entry.sequence)).toEqual([1, 2, 3, 4]);
      expect(committed.events[1]?.payload).toEqual({ step: 2 });
      expect(contents(committed.messages)).toEqual(["a", "b", "C", "d"]);
      expect(committed.checkpointIds).toEqual(["cp-1", "cp-2"]);
      expect(committed.checkpoints[0]).toMatchObject({
        state: { step: 1, again: true },
        transcriptLength: 4,
      });
      expect((await suite.manager.loadEvents(viaCommit.runId))[0]).toMatchObject({
        runId: viaCommit.runId,
        sessionId: viaCommit.sessionId,
        agentId: "agent",
      });
      expect(await suite.manager.listSessions()).toContain(viaCommit.sessionId);
    });

    it("refuses a transcript gap with store.transcript_gap and stores nothing of the commit", async (context) => {
      const store = committer(context);
      const sessionId = suite.id("gap-session");
      const runId = suite.id("gap-run");
      await store.commitCheckpoint({
        sessionId,
        runId,
        events: [event({ sessionId, runId }, 1)],
        messages: { fromIndex: 0, items: [say("a"), say("b")] },
        checkpoint: checkpoint("kept", { step: 1 }, 2),
      });
      const before = await stored(sessionId, runId);
      for (const fromIndex of [3, 7, -1, 1.5]) {
        const failure = await store
          .commitCheckpoint({
            sessionId,
            runId,
            events: [event({ sessionId, runId }, 2), event({ sessionId, runId }, 3)],
            messages: { fromIndex, items: [say("x")] },
            checkpoint: checkpoint("refused", { step: 2 }, 3),
          })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        expect(failure).toMatchObject({ code: "store.transcript_gap", context: { runId } });
      }
      expect(await stored(sessionId, runId)).toEqual(before);
      expect(await suite.manager.loadCheckpoint(sessionId, "refused")).toBeNull();

      // A run and a session the refused commit would have been the first write of stay unknown.
      const [newSession, newRun] = [suite.id("gap-new-session"), suite.id("gap-new-run")];
      await expect(
        store.commitCheckpoint({
          sessionId: newSession,
          runId: newRun,
          events: [event({ sessionId: newSession, runId: newRun }, 1)],
          messages: { fromIndex: 1, items: [say("x")] },
          checkpoint: checkpoint("refused"),
        }),
      ).rejects.toMatchObject({ code: "store.transcript_gap" });
      expect(await suite.manager.loadEvents(newRun)).toEqual([]);
      expect(await suite.manager.loadRunMessages(newRun)).toEqual([]);
      expect(await suite.manager.listCheckpoints(newSession)).toEqual([]);
      expect(await suite.manager.listSessions()).not.toContain(newSession);
    });

    it("leaves the transcript alone when messages is null", async (context) => {
      const store = committer(context);
      const sessionId = suite.id("null-session");
      const runId = suite.id("null-run");
      await suite.manager.saveRunMessages(runId, 0, [say("a"), say("b"), say("c")]);
      const commit: CheckpointCommit = {
        sessionId,
        runId,
        events: [event({ sessionId, runId }, 1)],
        messages: null,
        checkpoint: checkpoint("no-messages", { step: 1 }, 3),
      };
      await store.commitCheckpoint(commit);
      await store.commitCheckpoint({ ...commit, events: [], checkpoint: checkpoint("nothing-new", {}, 3) });
      expect(contents(await suite.manager.loadRunMessages(runId))).toEqual(["a", "b", "c"]);
      expect((await suite.manager.loadEvents(runId)).map((entry) => entry.sequence)).toEqual([1]);
      expect(await suite.manager.listCheckpoints(sessionId)).toEqual(["no-messages", "nothing-new"]);
      // Nor is a transcript made for a run that has none.
      const other = suite.id("null-run-none");
      await store.commitCheckpoint({ ...commit, runId: other, events: [], checkpoint: checkpoint("c") });
      expect(await suite.manager.loadRunMessages(other)).toEqual([]);
    });
  });
}
