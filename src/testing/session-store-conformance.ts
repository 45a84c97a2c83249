// The session and transcript part of the session-store contract: the exclusive scope, state, messages, artifacts.
import { describe, expect, it } from "vitest";
import type { Message } from "../contracts/message.js";
import type { SessionArtifact } from "../sessions/session-manager.js";
import { checkpoint, deferred, type SessionStoreSuite, settle } from "./session-store-suite.js";

/** Sessions and their transcripts: one scope at a time, state, messages and artifacts, listing and deleting. */
export function describeSessionStoreCases(suite: SessionStoreSuite): void {
  describe("exclusive scope", () => {
    it("runs scopes of one session one at a time, in arrival order", async () => {
      const sessionId = suite.id("serial");
      const log: string[] = [];
      const runs = [0, 1, 2].map((index) =>
        suite.manager.session(sessionId, async () => {
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
      const first = suite.manager.session(suite.id("a"), async () => {
        await second.promise;
        return "a";
      });
      const other = suite.manager.session(suite.id("b"), async () => {
        second.resolve();
        return "b";
      });
      expect(await Promise.all([first, other])).toEqual(["a", "b"]);
    });

    it("releases the session when the scope throws", async () => {
      const sessionId = suite.id("throws");
      await expect(
        suite.manager.session(sessionId, async () => {
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await suite.manager.session(sessionId, async () => "again")).toBe("again");
    });

    it("re-enters with the holder's token and shares its state", async () => {
      const sessionId = suite.id("reentrant");
      const result = await suite.manager.session(sessionId, async (outer) => {
        outer.state.depth = 1;
        return suite.manager.session(
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
      const sessionId = suite.id("other-token");
      const log: string[] = [];
      const hold = deferred();
      const entered = deferred();
      const holder = suite.manager.session(sessionId, async () => {
        log.push("holder");
        entered.resolve();
        await hold.promise;
        log.push("holder done");
      });
      // A store across a network takes round trips to enter: wait for the holder, not for a fixed time.
      await entered.promise;
      const stranger = suite.manager.session(sessionId, async () => void log.push("stranger"), {
        reentrantToken: Symbol("stranger"),
      });
      await settle();
      expect(log).toEqual(["holder"]);
      hold.resolve();
      await Promise.all([holder, stranger]);
      expect(log).toEqual(["holder", "holder done", "stranger"]);
    });

    it("refuses a caller beyond the queue size with SessionQueueFullError", async () => {
      const sessionId = suite.id("queue");
      const hold = deferred();
      const entered = deferred();
      const holder = suite.manager.session(sessionId, () => {
        entered.resolve();
        return hold.promise;
      });
      await entered.promise;
      const waiting = suite.manager.session(sessionId, async () => "waited", { queueSize: 1 });
      const refused = suite.manager.session(sessionId, async () => "refused", { queueSize: 1 });
      await expect(refused).rejects.toMatchObject({ code: "session.queue_full" });
      await expect(refused).rejects.toThrow(/waiting/);
      hold.resolve();
      await holder;
      expect(await waiting).toBe("waited");
    });

    it("leaves the queue with the signal's reason when aborted while waiting", async () => {
      const sessionId = suite.id("abort");
      const hold = deferred();
      const entered = deferred();
      const holder = suite.manager.session(sessionId, () => {
        entered.resolve();
        return hold.promise;
      });
      await entered.promise;
      const controller = new AbortController();
      let ran = false;
      const waiting = suite.manager.session(
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
      expect(await suite.manager.session(sessionId, async () => "free")).toBe("free");
    });
  });

  describe("state", () => {
    it("is empty for an unknown session and returns what was set", async () => {
      const sessionId = suite.id("state");
      expect(await suite.manager.getState(sessionId)).toEqual({});
      await suite.manager.setState(sessionId, { count: 1, nested: { ok: true } });
      expect(await suite.manager.getState(sessionId)).toEqual({ count: 1, nested: { ok: true } });
    });

    it("persists changes made to the scope's state after the scope ends", async () => {
      const sessionId = suite.id("scope-state");
      await suite.manager.setState(sessionId, { visits: 1 });
      await suite.manager.session(sessionId, async (scope) => {
        expect(scope.sessionId).toBe(sessionId);
        expect(scope.state).toEqual({ visits: 1 });
        scope.state.visits = 2;
        scope.state.note = "hello";
      });
      expect(await suite.manager.getState(sessionId)).toEqual({ visits: 2, note: "hello" });
      await suite.manager.session(sessionId, async (scope) => {
        expect(scope.state).toEqual({ visits: 2, note: "hello" });
      });
    });

    it("is not changed by mutating a value returned from getState", async () => {
      const sessionId = suite.id("state-copy");
      await suite.manager.setState(sessionId, { value: 1 });
      const state = await suite.manager.getState(sessionId);
      state.value = 99;
      expect(await suite.manager.getState(sessionId)).toEqual({ value: 1 });
    });
  });

  describe("messages and artifacts", () => {
    it("appends and loads messages in order", async () => {
      const sessionId = suite.id("messages");
      expect(await suite.manager.loadMessages(sessionId)).toEqual([]);
      const messages: Message[] = [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: "hello",
          toolCalls: [{ id: "c1", name: "add", arguments: { a: 1 } }],
        },
        { role: "tool", toolCallId: "c1", toolName: "add", content: "1" },
      ];
      for (const message of messages) await suite.manager.appendMessage(sessionId, message);
      expect(await suite.manager.loadMessages(sessionId)).toEqual(messages);
    });

    it("appends several messages at once, after earlier ones, in order", async () => {
      const sessionId = suite.id("messages-batch");
      await suite.manager.appendMessage(sessionId, { role: "user", content: "first" });
      await suite.manager.appendMessages(sessionId, [
        { role: "assistant", content: "second" },
        { role: "user", content: "third" },
      ]);
      await suite.manager.appendMessages(sessionId, []);
      expect((await suite.manager.loadMessages(sessionId)).map((message) => message.content)).toEqual([
        "first",
        "second",
        "third",
      ]);
    });

    it("saves and lists artifacts in order", async () => {
      const sessionId = suite.id("artifacts");
      expect(await suite.manager.listArtifacts(sessionId)).toEqual([]);
      const artifacts: SessionArtifact[] = [
        { name: "a", kind: "generic", payload: { x: 1 }, metadata: {} },
        { name: "b", kind: "file", payload: "text", metadata: { size: 4 } },
      ];
      for (const artifact of artifacts) await suite.manager.saveArtifact(sessionId, artifact);
      expect(await suite.manager.listArtifacts(sessionId)).toEqual(artifacts);
    });
  });

  describe("sessions", () => {
    it("lists sessions that hold data", async () => {
      const [a, b] = [suite.id("list-a"), suite.id("list-b")];
      await suite.manager.setState(a, { x: 1 });
      await suite.manager.appendMessage(b, { role: "user", content: "hi" });
      expect(await suite.manager.listSessions()).toEqual(expect.arrayContaining([a, b]));
    });

    it("deletes a session's state, messages, artifacts and checkpoints", async () => {
      const sessionId = suite.id("delete");
      const kept = suite.id("kept");
      await suite.manager.setState(sessionId, { x: 1 });
      await suite.manager.setState(kept, { y: 2 });
      await suite.manager.appendMessage(sessionId, { role: "user", content: "hi" });
      await suite.manager.saveArtifact(sessionId, { name: "a", kind: "generic", payload: 1, metadata: {} });
      await suite.manager.createCheckpoint(sessionId, checkpoint("c"));
      await suite.manager.deleteSession(sessionId);
      expect(await suite.manager.getState(sessionId)).toEqual({});
      expect(await suite.manager.loadMessages(sessionId)).toEqual([]);
      expect(await suite.manager.listArtifacts(sessionId)).toEqual([]);
      expect(await suite.manager.listCheckpoints(sessionId)).toEqual([]);
      expect(await suite.manager.loadCheckpoint(sessionId, "c")).toBeNull();
      const sessions = await suite.manager.listSessions();
      expect(sessions).not.toContain(sessionId);
      expect(sessions).toContain(kept);
      await suite.manager.deleteSession(suite.id("never-existed"));
    });
  });
}
