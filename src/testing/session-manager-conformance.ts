// Long because it is the whole session-store contract every store must meet, in one suite.
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, type TestContext } from "vitest";
import type { Message } from "../contracts/message.js";
import type { RunRecord } from "../contracts/run-types.js";
import { RuntimeEvent } from "../contracts/runtime-event.js";
import {
  type CheckpointCommit,
  type CheckpointCommitter,
  isCheckpointCommitter,
  SESSION_SCHEMA_VERSION,
  type SessionArtifact,
  type SessionManager,
} from "../sessions/session-manager.js";

/** Options of {@link describeSessionManagerConformance}. */
export interface SessionManagerConformanceOptions {
  /** Called after each test, after `close()`, to remove what the backend stored (files, tables). */
  cleanup?: (manager: SessionManager) => Promise<void> | void;
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** Let pending promise callbacks and timers run, so a waiter that could wrongly proceed would. */
function settle(): Promise<void> {
  return new Promise((done) => setTimeout(done, 5));
}

function checkpoint(checkpointId: string, state: Record<string, unknown> = {}, transcriptLength = 0) {
  return { checkpointId, state, transcriptLength, artifactCount: 0 };
}

function runRecord(overrides: Partial<RunRecord> & { runId: string; sessionId: string }): RunRecord {
  const now = new Date().toISOString();
  return {
    agentId: "agent",
    status: "running",
    pendingToolCalls: [],
    createdAt: now,
    updatedAt: now,
    lastSequence: 0,
    ...overrides,
  };
}

/**
 * Register the vitest suite every `SessionManager` must pass. `factory` makes a fresh manager per test;
 * session and run ids are unique per test, so a backend that shares storage between managers still passes.
 *
 * @example
 * describeSessionManagerConformance("sqlite", () => new SqliteSessionManager({ dbPath: ":memory:" }));
 */
export function describeSessionManagerConformance(
  name: string,
  factory: () => Promise<SessionManager> | SessionManager,
  options: SessionManagerConformanceOptions = {},
): void {
  describe(`SessionManager conformance: ${name}`, () => {
    let manager: SessionManager;
    const id = (label: string): string => `${label}-${randomUUID()}`;

    beforeEach(async () => {
      manager = await factory();
    });

    afterEach(async () => {
      await manager.close();
      await options.cleanup?.(manager);
    });

    describe("exclusive scope", () => {
      it("runs scopes of one session one at a time, in arrival order", async () => {
        const sessionId = id("serial");
        const log: string[] = [];
        const runs = [0, 1, 2].map((index) =>
          manager.session(sessionId, async () => {
            log.push(`start ${index}`);
            await settle();
            log.push(`end ${index}`);
            return index;
          }),
        );
        expect(await Promise.all(runs)).toEqual([0, 1, 2]);
        expect(log).toEqual(["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]);
      });

      it("runs scopes of different sessions concurrently", async () => {
        const second = deferred();
        const first = manager.session(id("a"), async () => {
          await second.promise;
          return "a";
        });
        const other = manager.session(id("b"), async () => {
          second.resolve();
          return "b";
        });
        expect(await Promise.all([first, other])).toEqual(["a", "b"]);
      });

      it("releases the session when the scope throws", async () => {
        const sessionId = id("throws");
        await expect(
          manager.session(sessionId, async () => {
            throw new Error("boom");
          }),
        ).rejects.toThrow("boom");
        expect(await manager.session(sessionId, async () => "again")).toBe("again");
      });

      it("re-enters with the holder's token and shares its state", async () => {
        const sessionId = id("reentrant");
        const result = await manager.session(sessionId, async (outer) => {
          outer.state.depth = 1;
          return manager.session(
            sessionId,
            async (inner) => {
              expect(inner.state).toBe(outer.state);
              expect(inner.token).toBe(outer.token);
              return inner.state.depth;
            },
            { reentrantToken: outer.token },
          );
        });
        expect(result).toBe(1);
      });

      it("makes a caller with another token wait for the holder", async () => {
        const sessionId = id("other-token");
        const log: string[] = [];
        const hold = deferred();
        const entered = deferred();
        const holder = manager.session(sessionId, async () => {
          log.push("holder");
          entered.resolve();
          await hold.promise;
          log.push("holder done");
        });
        // A store across a network takes round trips to enter: wait for the holder, not for a fixed time.
        await entered.promise;
        const stranger = manager.session(sessionId, async () => void log.push("stranger"), {
          reentrantToken: Symbol("stranger"),
        });
        await settle();
        expect(log).toEqual(["holder"]);
        hold.resolve();
        await Promise.all([holder, stranger]);
        expect(log).toEqual(["holder", "holder done", "stranger"]);
      });

      it("refuses a caller beyond the queue size with SessionQueueFullError", async () => {
        const sessionId = id("queue");
        const hold = deferred();
        const entered = deferred();
        const holder = manager.session(sessionId, () => {
          entered.resolve();
          return hold.promise;
        });
        await entered.promise;
        const waiting = manager.session(sessionId, async () => "waited", { queueSize: 1 });
        const refused = manager.session(sessionId, async () => "refused", { queueSize: 1 });
        await expect(refused).rejects.toMatchObject({ code: "session.queue_full" });
        await expect(refused).rejects.toThrow(/waiting/);
        hold.resolve();
        await holder;
        expect(await waiting).toBe("waited");
      });

      it("leaves the queue with the signal's reason when aborted while waiting", async () => {
        const sessionId = id("abort");
        const hold = deferred();
        const entered = deferred();
        const holder = manager.session(sessionId, () => {
          entered.resolve();
          return hold.promise;
        });
        await entered.promise;
        const controller = new AbortController();
        let ran = false;
        const waiting = manager.session(
          sessionId,
          async () => {
            ran = true;
          },
          {
            signal: controller.signal,
          },
        );
        const reason = new Error("gave up");
        controller.abort(reason);
        await expect(waiting).rejects.toBe(reason);
        hold.resolve();
        await holder;
        expect(ran).toBe(false);
        expect(await manager.session(sessionId, async () => "free")).toBe("free");
      });
    });

    describe("state", () => {
      it("is empty for an unknown session and returns what was set", async () => {
        const sessionId = id("state");
        expect(await manager.getState(sessionId)).toEqual({});
        await manager.setState(sessionId, { count: 1, nested: { ok: true } });
        expect(await manager.getState(sessionId)).toEqual({ count: 1, nested: { ok: true } });
      });

      it("persists changes made to the scope's state after the scope ends", async () => {
        const sessionId = id("scope-state");
        await manager.setState(sessionId, { visits: 1 });
        await manager.session(sessionId, async (scope) => {
          expect(scope.sessionId).toBe(sessionId);
          expect(scope.state).toEqual({ visits: 1 });
          scope.state.visits = 2;
          scope.state.note = "hello";
        });
        expect(await manager.getState(sessionId)).toEqual({ visits: 2, note: "hello" });
        await manager.session(sessionId, async (scope) => {
          expect(scope.state).toEqual({ visits: 2, note: "hello" });
        });
      });

      it("is not changed by mutating a value returned from getState", async () => {
        const sessionId = id("state-copy");
        await manager.setState(sessionId, { value: 1 });
        const state = await manager.getState(sessionId);
        state.value = 99;
        expect(await manager.getState(sessionId)).toEqual({ value: 1 });
      });
    });

    describe("messages and artifacts", () => {
      it("appends and loads messages in order", async () => {
        const sessionId = id("messages");
        expect(await manager.loadMessages(sessionId)).toEqual([]);
        const messages: Message[] = [
          { role: "user", content: "hi" },
          {
            role: "assistant",
            content: "hello",
            toolCalls: [{ id: "c1", name: "add", arguments: { a: 1 } }],
          },
          { role: "tool", toolCallId: "c1", toolName: "add", content: "1" },
        ];
        for (const message of messages) await manager.appendMessage(sessionId, message);
        expect(await manager.loadMessages(sessionId)).toEqual(messages);
      });

      it("appends several messages at once, after earlier ones, in order", async () => {
        const sessionId = id("messages-batch");
        await manager.appendMessage(sessionId, { role: "user", content: "first" });
        await manager.appendMessages(sessionId, [
          { role: "assistant", content: "second" },
          { role: "user", content: "third" },
        ]);
        await manager.appendMessages(sessionId, []);
        expect((await manager.loadMessages(sessionId)).map((message) => message.content)).toEqual([
          "first",
          "second",
          "third",
        ]);
      });

      it("saves and lists artifacts in order", async () => {
        const sessionId = id("artifacts");
        expect(await manager.listArtifacts(sessionId)).toEqual([]);
        const artifacts: SessionArtifact[] = [
          { name: "a", kind: "generic", payload: { x: 1 }, metadata: {} },
          { name: "b", kind: "file", payload: "text", metadata: { size: 4 } },
        ];
        for (const artifact of artifacts) await manager.saveArtifact(sessionId, artifact);
        expect(await manager.listArtifacts(sessionId)).toEqual(artifacts);
      });
    });

    describe("checkpoints", () => {
      it("creates, loads and lists checkpoints with a schema version", async () => {
        const sessionId = id("checkpoints");
        expect(await manager.listCheckpoints(sessionId)).toEqual([]);
        const state = { transcript: [{ role: "user", content: "hi" }], step: 1 };
        const created = await manager.createCheckpoint(sessionId, checkpoint("run-1:step:1", state, 1));
        expect(created.schemaVersion).toBe(SESSION_SCHEMA_VERSION);
        expect(Number.isNaN(Date.parse(created.createdAt))).toBe(false);
        await manager.createCheckpoint(sessionId, checkpoint("run-1:step:2", { ...state, step: 2 }, 3));
        const loaded = await manager.loadCheckpoint(sessionId, "run-1:step:1");
        expect(loaded).toMatchObject({
          schemaVersion: SESSION_SCHEMA_VERSION,
          checkpointId: "run-1:step:1",
          state,
          transcriptLength: 1,
          artifactCount: 0,
          createdAt: created.createdAt,
        });
        expect(await manager.listCheckpoints(sessionId)).toEqual(["run-1:step:1", "run-1:step:2"]);
      });

      it("replaces a checkpoint created again with the same id, keeping its place", async () => {
        const sessionId = id("checkpoint-again");
        await manager.createCheckpoint(sessionId, checkpoint("a", { step: 1 }, 1));
        await manager.createCheckpoint(sessionId, checkpoint("b", { step: 2 }, 2));
        await manager.createCheckpoint(sessionId, checkpoint("a", { step: 1, retried: true }, 1));
        expect(await manager.listCheckpoints(sessionId)).toEqual(["a", "b"]);
        expect((await manager.loadCheckpoint(sessionId, "a"))?.state).toEqual({ step: 1, retried: true });
      });

      it("answers null for an unknown checkpoint id", async () => {
        const sessionId = id("no-checkpoint");
        expect(await manager.loadCheckpoint(sessionId, "missing")).toBeNull();
        await manager.createCheckpoint(sessionId, checkpoint("present"));
        expect(await manager.loadCheckpoint(sessionId, "missing")).toBeNull();
        expect(await manager.loadCheckpoint(id("other"), "present")).toBeNull();
      });
    });

    describe("run records", () => {
      it("saves, gets, lists with filters and updates run records", async () => {
        const [s1, s2] = [id("runs-a"), id("runs-b")];
        const [r1, r2, r3] = [id("run"), id("run"), id("run")];
        const first = runRecord({ runId: r1, sessionId: s1 });
        await manager.saveRun(first);
        await manager.saveRun(
          runRecord({ runId: r2, sessionId: s1, status: "done", stopReason: "completed" }),
        );
        await manager.saveRun(runRecord({ runId: r3, sessionId: s2, status: "waiting", lastSequence: 7 }));
        expect(await manager.getRun(r1)).toEqual(first);
        expect(await manager.getRun(id("missing"))).toBeNull();
        expect((await manager.listRuns({ sessionId: s1 })).map((run) => run.runId).sort()).toEqual(
          [r1, r2].sort(),
        );
        expect((await manager.listRuns({ sessionId: s1, status: "done" })).map((run) => run.runId)).toEqual([
          r2,
        ]);
        expect((await manager.listRuns({ status: "waiting" })).map((run) => run.runId)).toContain(r3);
        const ids = (await manager.listRuns()).map((run) => run.runId);
        expect(ids).toEqual(expect.arrayContaining([r1, r2, r3]));

        await manager.saveRun({ ...first, status: "done", stopReason: "failed", lastSequence: 12 });
        expect(await manager.getRun(r1)).toMatchObject({
          status: "done",
          stopReason: "failed",
          lastSequence: 12,
        });
        expect(await manager.listRuns({ sessionId: s1 })).toHaveLength(2);
      });

      it("is not changed by mutating a record after saving or loading it", async () => {
        const runId = id("run");
        const record = runRecord({ runId, sessionId: id("copy") });
        await manager.saveRun(record);
        record.status = "done";
        record.pendingToolCalls.push({
          toolCallId: "c",
          toolId: "t",
          params: {},
          resumeMode: "replay_tool_call",
        });
        const loaded = await manager.getRun(runId);
        expect(loaded).toMatchObject({ status: "running", pendingToolCalls: [] });
        if (loaded) loaded.status = "waiting";
        expect((await manager.getRun(runId))?.status).toBe("running");
      });
    });

    describe("event logs", () => {
      it("appends events and loads them after a sequence", async () => {
        const runId = id("events");
        const sessionId = id("events-session");
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
        expect(await manager.loadEvents(runId)).toEqual([]);
        await manager.appendEvents(runId, [event(1), event(2), event(3)]);
        await manager.appendEvents(runId, [event(4), event(5)]);
        await manager.appendEvents(runId, []);
        // A retried batch (after a lost acknowledgement) must not store an event twice.
        await manager.appendEvents(runId, [event(4), event(5)]);
        const all = await manager.loadEvents(runId);
        expect(all.map((entry) => entry.sequence)).toEqual([1, 2, 3, 4, 5]);
        expect(all[0]).toMatchObject({
          kind: "step.started",
          payload: { step: 1 },
          runId,
          sessionId,
          agentId: "agent",
        });
        expect(all[0]?.timestampMs).toBe(1_700_000_000_001);
        const loadAfter = (sequence: number) => manager.loadEvents(runId, { afterSequence: sequence });
        expect((await loadAfter(0)).map((entry) => entry.sequence)).toEqual([1, 2, 3, 4, 5]);
        expect((await loadAfter(3)).map((entry) => entry.sequence)).toEqual([4, 5]);
        expect(await loadAfter(5)).toEqual([]);
        expect(await loadAfter(99)).toEqual([]);
        expect(await manager.loadEvents(id("other-run"))).toEqual([]);
      });
    });

    describe("run transcripts", () => {
      const say = (content: string): Message => ({ role: "user", content });
      const contents = (messages: readonly Message[]) => messages.map((message) => message.content);

      it("appends from 0 and on from the stored length", async () => {
        const runId = id("run-messages");
        const first: Message[] = [
          { role: "system", content: "be brief" },
          { role: "user", content: "add 1 and 2" },
          {
            role: "assistant",
            content: "",
            toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }],
          },
        ];
        await manager.saveRunMessages(runId, 0, first);
        expect(await manager.loadRunMessages(runId)).toEqual(first);
        const second: Message[] = [
          { role: "tool", toolCallId: "c1", toolName: "add", content: "3" },
          { role: "assistant", content: "3" },
        ];
        await manager.saveRunMessages(runId, 3, second);
        await manager.saveRunMessages(runId, 5, []);
        expect(await manager.loadRunMessages(runId)).toEqual([...first, ...second]);
      });

      it("replaces the tail from an index inside the stored transcript", async () => {
        const runId = id("run-rewrite");
        await manager.saveRunMessages(runId, 0, [say("a"), say("b"), say("c"), say("d")]);
        // A resumed step rewrites what a crash cut short: fewer messages than were there.
        await manager.saveRunMessages(runId, 2, [say("C")]);
        expect(contents(await manager.loadRunMessages(runId))).toEqual(["a", "b", "C"]);
        // More than were there.
        await manager.saveRunMessages(runId, 1, [say("B"), say("C2"), say("D"), say("E")]);
        expect(contents(await manager.loadRunMessages(runId))).toEqual(["a", "B", "C2", "D", "E"]);
        // No messages at an index inside cuts the transcript there.
        await manager.saveRunMessages(runId, 3, []);
        expect(contents(await manager.loadRunMessages(runId))).toEqual(["a", "B", "C2"]);
        await manager.saveRunMessages(runId, 0, [say("fresh")]);
        expect(contents(await manager.loadRunMessages(runId))).toEqual(["fresh"]);
      });

      it("loads the first `length` messages when given", async () => {
        const runId = id("run-length");
        await manager.saveRunMessages(runId, 0, [say("a"), say("b"), say("c")]);
        expect(contents(await manager.loadRunMessages(runId, { length: 2 }))).toEqual(["a", "b"]);
        expect(await manager.loadRunMessages(runId, { length: 0 })).toEqual([]);
        expect(contents(await manager.loadRunMessages(runId, { length: 3 }))).toEqual(["a", "b", "c"]);
        expect(contents(await manager.loadRunMessages(runId, { length: 10 }))).toEqual(["a", "b", "c"]);
        expect(contents(await manager.loadRunMessages(runId, {}))).toEqual(["a", "b", "c"]);
      });

      it("answers [] for an unknown run", async () => {
        expect(await manager.loadRunMessages(id("no-run"))).toEqual([]);
        expect(await manager.loadRunMessages(id("no-run"), { length: 3 })).toEqual([]);
      });

      it("refuses a gap with store.transcript_gap and keeps what was stored", async () => {
        const runId = id("run-gap");
        await expect(manager.saveRunMessages(runId, 1, [say("x")])).rejects.toMatchObject({
          code: "store.transcript_gap",
        });
        expect(await manager.loadRunMessages(runId)).toEqual([]);
        await manager.saveRunMessages(runId, 0, [say("a"), say("b")]);
        for (const fromIndex of [3, 7, -1, 1.5]) {
          const failure = await manager.saveRunMessages(runId, fromIndex, [say("x"), say("y")]).then(
            () => undefined,
            (error: unknown) => error,
          );
          expect(failure).toMatchObject({ code: "store.transcript_gap", context: { runId } });
        }
        expect(contents(await manager.loadRunMessages(runId))).toEqual(["a", "b"]);
        await manager.saveRunMessages(runId, 2, [say("c")]);
        expect(contents(await manager.loadRunMessages(runId))).toEqual(["a", "b", "c"]);
      });

      it("keeps runs apart from each other and from session messages", async () => {
        const [r1, r2] = [id("run-a"), id("run-b")];
        const sessionId = id("run-session");
        await manager.appendMessages(sessionId, [say("session")]);
        await manager.saveRunMessages(r1, 0, [say("one"), say("two")]);
        await manager.saveRunMessages(r2, 0, [say("other")]);
        await manager.saveRunMessages(r1, 1, [say("TWO")]);
        expect(contents(await manager.loadRunMessages(r1))).toEqual(["one", "TWO"]);
        expect(contents(await manager.loadRunMessages(r2))).toEqual(["other"]);
        expect(contents(await manager.loadMessages(sessionId))).toEqual(["session"]);
        // Neither a session nor a run record is made or changed by a run's transcript.
        expect(await manager.loadRunMessages(sessionId)).toEqual([]);
        expect(await manager.getRun(r1)).toBeNull();
        await manager.deleteSession(sessionId);
        expect(contents(await manager.loadRunMessages(r1))).toEqual(["one", "TWO"]);
      });

      it("is not changed by mutating the arrays saved or loaded", async () => {
        const runId = id("run-copy");
        const saved = [say("a"), say("b")];
        await manager.saveRunMessages(runId, 0, saved);
        saved.push(say("pushed"));
        saved.length = 0;
        const loaded = await manager.loadRunMessages(runId);
        expect(contents(loaded)).toEqual(["a", "b"]);
        loaded.push(say("c"));
        loaded.splice(0, 1);
        const partial = await manager.loadRunMessages(runId, { length: 1 });
        partial.push(say("more"));
        expect(contents(await manager.loadRunMessages(runId))).toEqual(["a", "b"]);
      });
    });

    // Only for stores with the optional `commitCheckpoint` ability (CheckpointCommitter): the tests of a store
    // without it are skipped, since the run loop then makes the three separate calls tested above.
    describe("checkpoint commits (stores with commitCheckpoint only)", () => {
      const say = (content: string): Message => ({ role: "user", content });
      const contents = (messages: readonly Message[]) => messages.map((message) => message.content);
      const event = (runId: string, sessionId: string, sequence: number, payload = {}): RuntimeEvent =>
        new RuntimeEvent(
          "step.started",
          { step: sequence, ...payload },
          1_700_000_000_000 + sequence,
          runId,
          sessionId,
          "agent",
          sequence,
        );
      const committer = (context: TestContext): SessionManager & CheckpointCommitter => {
        if (!isCheckpointCommitter(manager)) context.skip();
        return manager as SessionManager & CheckpointCommitter;
      };
      /** What a run's stored data looks like, the checkpoints' creation times left out. */
      const stored = async (sessionId: string, runId: string) => ({
        events: (await manager.loadEvents(runId)).map(({ kind, payload, sequence, timestampMs }) => ({
          kind,
          payload,
          sequence,
          timestampMs,
        })),
        messages: await manager.loadRunMessages(runId),
        checkpointIds: await manager.listCheckpoints(sessionId),
        checkpoints: await Promise.all(
          (await manager.listCheckpoints(sessionId)).map(async (checkpointId) => {
            const { createdAt: _, ...rest } = (await manager.loadCheckpoint(sessionId, checkpointId)) ?? {};
            return rest;
          }),
        ),
      });

      it("stores events, messages and the checkpoint as the three separate calls would", async (context) => {
        const store = committer(context);
        const [viaCommit, viaCalls] = [
          { sessionId: id("commit-session"), runId: id("commit-run") },
          { sessionId: id("calls-session"), runId: id("calls-run") },
        ];
        // The same history written both ways: events (a retried one among them), a rewritten tail, a checkpoint
        // created twice.
        const steps = ({ sessionId, runId }: { sessionId: string; runId: string }) => [
          {
            events: [event(runId, sessionId, 1), event(runId, sessionId, 2)],
            messages: { fromIndex: 0, items: [say("a"), say("b"), say("c")] },
            checkpoint: checkpoint("cp-1", { step: 1 }, 3),
          },
          {
            // Sequence 2 again, with another payload: stored already, so skipped; 3 and 4 are new.
            events: [
              event(runId, sessionId, 2, { retried: true }),
              event(runId, sessionId, 3),
              event(runId, sessionId, 4),
            ],
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
          expect(await manager.loadCheckpoint(viaCommit.sessionId, step.checkpoint.checkpointId)).toEqual(
            committed,
          );
        }
        for (const step of steps(viaCalls)) {
          await manager.appendEvents(viaCalls.runId, step.events);
          await manager.saveRunMessages(viaCalls.runId, step.messages.fromIndex, step.messages.items);
          await manager.createCheckpoint(viaCalls.sessionId, step.checkpoint);
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
        expect((await manager.loadEvents(viaCommit.runId))[0]).toMatchObject({
          runId: viaCommit.runId,
          sessionId: viaCommit.sessionId,
          agentId: "agent",
        });
        expect(await manager.listSessions()).toContain(viaCommit.sessionId);
      });

      it("refuses a transcript gap with store.transcript_gap and stores nothing of the commit", async (context) => {
        const store = committer(context);
        const sessionId = id("gap-session");
        const runId = id("gap-run");
        await store.commitCheckpoint({
          sessionId,
          runId,
          events: [event(runId, sessionId, 1)],
          messages: { fromIndex: 0, items: [say("a"), say("b")] },
          checkpoint: checkpoint("kept", { step: 1 }, 2),
        });
        const before = await stored(sessionId, runId);
        for (const fromIndex of [3, 7, -1, 1.5]) {
          const failure = await store
            .commitCheckpoint({
              sessionId,
              runId,
              events: [event(runId, sessionId, 2), event(runId, sessionId, 3)],
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
        expect(await manager.loadCheckpoint(sessionId, "refused")).toBeNull();

        // A run and a session the refused commit would have been the first write of stay unknown.
        const [newSession, newRun] = [id("gap-new-session"), id("gap-new-run")];
        await expect(
          store.commitCheckpoint({
            sessionId: newSession,
            runId: newRun,
            events: [event(newRun, newSession, 1)],
            messages: { fromIndex: 1, items: [say("x")] },
            checkpoint: checkpoint("refused"),
          }),
        ).rejects.toMatchObject({ code: "store.transcript_gap" });
        expect(await manager.loadEvents(newRun)).toEqual([]);
        expect(await manager.loadRunMessages(newRun)).toEqual([]);
        expect(await manager.listCheckpoints(newSession)).toEqual([]);
        expect(await manager.listSessions()).not.toContain(newSession);
      });

      it("leaves the transcript alone when messages is null", async (context) => {
        const store = committer(context);
        const sessionId = id("null-session");
        const runId = id("null-run");
        await manager.saveRunMessages(runId, 0, [say("a"), say("b"), say("c")]);
        const commit: CheckpointCommit = {
          sessionId,
          runId,
          events: [event(runId, sessionId, 1)],
          messages: null,
          checkpoint: checkpoint("no-messages", { step: 1 }, 3),
        };
        await store.commitCheckpoint(commit);
        await store.commitCheckpoint({ ...commit, events: [], checkpoint: checkpoint("nothing-new", {}, 3) });
        expect(contents(await manager.loadRunMessages(runId))).toEqual(["a", "b", "c"]);
        expect((await manager.loadEvents(runId)).map((entry) => entry.sequence)).toEqual([1]);
        expect(await manager.listCheckpoints(sessionId)).toEqual(["no-messages", "nothing-new"]);
        // Nor is a transcript made for a run that has none.
        const other = id("null-run-none");
        await store.commitCheckpoint({ ...commit, runId: other, events: [], checkpoint: checkpoint("c") });
        expect(await manager.loadRunMessages(other)).toEqual([]);
      });
    });

    describe("sessions", () => {
      it("lists sessions that hold data", async () => {
        const [a, b] = [id("list-a"), id("list-b")];
        await manager.setState(a, { x: 1 });
        await manager.appendMessage(b, { role: "user", content: "hi" });
        expect(await manager.listSessions()).toEqual(expect.arrayContaining([a, b]));
      });

      it("deletes a session's state, messages, artifacts and checkpoints", async () => {
        const sessionId = id("delete");
        const kept = id("kept");
        await manager.setState(sessionId, { x: 1 });
        await manager.setState(kept, { y: 2 });
        await manager.appendMessage(sessionId, { role: "user", content: "hi" });
        await manager.saveArtifact(sessionId, { name: "a", kind: "generic", payload: 1, metadata: {} });
        await manager.createCheckpoint(sessionId, checkpoint("c"));
        await manager.deleteSession(sessionId);
        expect(await manager.getState(sessionId)).toEqual({});
        expect(await manager.loadMessages(sessionId)).toEqual([]);
        expect(await manager.listArtifacts(sessionId)).toEqual([]);
        expect(await manager.listCheckpoints(sessionId)).toEqual([]);
        expect(await manager.loadCheckpoint(sessionId, "c")).toBeNull();
        const sessions = await manager.listSessions();
        expect(sessions).not.toContain(sessionId);
        expect(sessions).toContain(kept);
        await manager.deleteSession(id("never-existed"));
      });
    });
  });
}
