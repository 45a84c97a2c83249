import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AttachedRuntime, KeelHost } from "../../src/host/index.js";
import { binding, collect, createTestHost, message, RUNNER_ID, typesOf } from "./host-scenario.js";

/**
 * The runs every way of attaching a Keel runner must carry the same: a host-proxied model and tool call with
 * streamed deltas, an artifact, a suspension kept in its conversation's state and resumed by a second event
 * (two conversations of one binding independently), the same suspension asked and answered as an interaction, a
 * cancel and a passed deadline. `attach` connects the host to a runner serving HOST_RUNNER_CONFIG.
 */
export function describeHostRunnerScenarios(
  name: string,
  attach: (host: KeelHost) => Promise<AttachedRuntime>,
): void {
  describe(`Keel host and Keel runner: ${name}`, () => {
    let test: ReturnType<typeof createTestHost>;
    let runtime: AttachedRuntime;

    beforeAll(async () => {
      test = createTestHost();
      runtime = await attach(test.host);
    });
    afterAll(async () => {
      await test.host.close();
    });

    it("discovers the runner", () => {
      expect(runtime.runners.map((runner) => runner.id)).toEqual([RUNNER_ID]);
      expect(runtime.runners[0]!.manifest.permissions.models).toEqual(["invoke", "stream"]);
    });

    it("runs with the host's model and tool through the proxy, streaming deltas, and audits each call", async () => {
      const results = await collect(test.host.run(message("please lookup keel"), binding()));
      expect(typesOf(results)).toEqual([
        "tool.call.started",
        "tool.call.completed",
        "message.delta",
        "message.delta",
        "message.delta",
        "message.completed",
        "run.completed",
      ]);
      const runId = results[0]!.run_id;
      expect(results[1]!.data).toMatchObject({
        tool_name: "lookup",
        result: { meaning: "keel is a ship's spine" },
      });
      const audit = test.stores.audit.entries.filter((entry) => entry.run_id === runId);
      // The runner declares steering, so it asks for follow-up input before each model call.
      expect(audit.map((entry) => [entry.action, entry.result])).toEqual([
        ["steering_pull", "ok"],
        ["invoke_llm_stream", "ok"],
        ["call_tool", "ok"],
        ["steering_pull", "ok"],
        ["invoke_llm_stream", "ok"],
      ]);
      expect(
        audit.every(
          (entry) => entry.runner_id === RUNNER_ID && entry.scope === "conversation:conversation-1",
        ),
      ).toBe(true);
      expect(test.host.activeRuns()).toEqual([]);
    });

    it("registers a runner's artifact under the run and its conversation", async () => {
      const results = await collect(test.host.run(message("the report please"), binding()));
      const artifact = results.find((result) => result.type === "artifact.created");
      expect(artifact).toBeDefined();
      const id = (artifact!.data as { artifact_id: string }).artifact_id;
      const stored = await test.stores.artifacts.get(id);
      expect(stored).toMatchObject({
        run_id: artifact!.run_id,
        conversation_id: "conversation-1",
        source: "runner",
        runner_id: RUNNER_ID,
      });
      expect(stored!.size_bytes).toBeGreaterThan(0);
      expect(stored!.artifact_type).toBe("tool_output");
      expect(typesOf(results).at(-1)).toBe("run.completed");
    });

    it("keeps a suspended run in its conversation's state and resumes it with the next event", async () => {
      const first = await collect(test.host.run(message("delete everything", "conversation-2"), binding()));
      expect(typesOf(first)).toEqual(["state.updated", "run.failed"]);
      expect(first[0]!.data).toMatchObject({ scope: "conversation", key: "keel.suspended_run_id" });
      expect(first[1]!.data).toMatchObject({ code: "runner.suspended", retryable: false });
      const key = "conversation:plugin:keel/agents/helper:binding-1:conversation-2";
      const waiting = await test.stores.state.get(key, "keel.suspended_run_id");
      expect(typeof waiting).toBe("string");
      expect(
        await test.stores.state.get("runner:plugin:keel/agents/helper:binding-1", "keel.suspended_run_id"),
      ).toBeUndefined();
      const second = await collect(test.host.run(message("approve", "conversation-2"), binding()));
      expect(typesOf(second)).toContain("tool.call.completed");
      expect(typesOf(second).slice(-2)).toEqual(["message.completed", "run.completed"]);
      expect(await test.stores.state.get(key, "keel.suspended_run_id")).toBeNull();
    });

    it("suspends and resumes two conversations of one binding independently", async () => {
      const bound = binding({ binding_id: "binding-two" });
      const keyOf = (conversation: string) =>
        `conversation:plugin:keel/agents/helper:binding-two:${conversation}`;
      const a = await collect(test.host.run(message("delete everything", "conversation-a"), bound));
      const b = await collect(test.host.run(message("delete everything", "conversation-b"), bound));
      expect(typesOf(a).at(-1)).toBe("run.failed");
      expect(typesOf(b).at(-1)).toBe("run.failed");
      const waitingA = await test.stores.state.get(keyOf("conversation-a"), "keel.suspended_run_id");
      const waitingB = await test.stores.state.get(keyOf("conversation-b"), "keel.suspended_run_id");
      expect(typeof waitingA).toBe("string");
      expect(typeof waitingB).toBe("string");
      expect(waitingA).not.toBe(waitingB);

      // A's decision resumes A's run only; B's run still waits.
      const approved = await collect(test.host.run(message("approve", "conversation-a"), bound));
      expect(approved.find((result) => result.type === "tool.call.completed")!.data).toMatchObject({
        tool_name: "delete_all",
        result: { deleted: 3 },
      });
      expect(typesOf(approved).at(-1)).toBe("run.completed");
      expect(await test.stores.state.get(keyOf("conversation-a"), "keel.suspended_run_id")).toBeNull();
      expect(await test.stores.state.get(keyOf("conversation-b"), "keel.suspended_run_id")).toBe(waitingB);

      // B's own decision, a denial, resumes B's run.
      const denied = await collect(test.host.run(message("deny", "conversation-b"), bound));
      const completed = denied.find((result) => result.type === "tool.call.completed");
      expect(completed?.data).toMatchObject({ tool_name: "delete_all", error: expect.any(String) });
      expect(typesOf(denied).at(-1)).toBe("run.completed");
      expect(await test.stores.state.get(keyOf("conversation-b"), "keel.suspended_run_id")).toBeNull();
    });

    it("asks a suspension's decision as an interaction where the platform shows them; the answer resumes it", async () => {
      const conversation = "conversation-ask";
      const event = message("delete everything", conversation);
      const shown = {
        ...event,
        delivery: { ...event.delivery!, interactions: { field_types: ["text"], supports_updates: false } },
      };
      const first = await collect(test.host.run(shown, binding()));
      expect(typesOf(first)).toEqual(["state.updated", "action.requested", "run.failed"]);
      const waiting = test.host.pendingInteractions().filter((pending) => pending.runId === first[0]!.run_id);
      expect(waiting.map((pending) => pending.request.kind)).toEqual(["confirmation"]);
      const id = waiting[0]!.request.interaction_id;
      const answered = await collect(
        test.host.submitInteraction(RUNNER_ID, { interaction_id: id, action_id: "approve", values: {} }),
      );
      expect(answered.find((result) => result.type === "tool.call.completed")!.data).toMatchObject({
        tool_name: "delete_all",
        result: { deleted: 3 },
      });
      expect(typesOf(answered).at(-1)).toBe("run.completed");
    });

    it("steers a message sent mid-run into the run before its next model call", async () => {
      const conversation = "conversation-steer";
      let steered: boolean | undefined;
      test.hooks.onPause = (runId) => {
        steered = test.host.steer(runId, message("steer: the sky is green", conversation));
      };
      try {
        const results = await collect(test.host.run(message("please pause", conversation), binding()));
        expect(steered).toBe(true);
        expect(typesOf(results).slice(0, 2)).toEqual(["tool.call.started", "tool.call.completed"]);
        expect(typesOf(results).slice(-2)).toEqual(["message.completed", "run.completed"]);
        const completed = results.find((result) => result.type === "message.completed")!;
        expect(completed.data).toMatchObject({ message: { content: "Heard: the sky is green" } });
        const runId = results[0]!.run_id;
        const pulls = test.stores.audit.entries.filter(
          (entry) => entry.run_id === runId && entry.action === "steering_pull",
        );
        expect(pulls.map((entry) => entry.result)).toEqual(["ok", "ok"]);
        // The host keeps the steered message in the conversation, between the question and the answer.
        const page = await test.stores.transcript.page({
          conversationId: conversation,
          limit: 10,
          direction: "forward",
        });
        expect(page.items.map((item) => [item.role, item.content])).toEqual([
          ["user", "please pause"],
          ["user", "steer: the sky is green"],
          ["assistant", "Heard: the sky is green"],
        ]);
        // The ledger has the run, completed, with its results.
        expect(await test.host.ledger.get(runId)).toMatchObject({
          status: "completed",
          conversation_id: conversation,
        });
      } finally {
        delete test.hooks.onPause;
      }
      expect(test.host.steer("no-such-run", message("steer: late", conversation))).toBe(false);
    });

    it("cancels a run on request", async () => {
      const results: unknown[] = [];
      const running = collect(test.host.run(message("hang on"), binding({ binding_id: "binding-cancel" })));
      await expect.poll(() => test.host.activeRuns().length).toBe(1);
      expect(test.host.cancel(test.host.activeRuns()[0]!)).toBe(true);
      results.push(...(await running));
      expect(results.at(-1)).toMatchObject({ type: "run.failed", data: { code: "cancelled" } });
      expect(test.host.activeRuns()).toEqual([]);
    });

    it("ends a run that overruns its deadline with runner.timeout, retryable", async () => {
      const results = await collect(
        test.host.run(
          message("hang on"),
          binding({ binding_id: "binding-deadline", runner_config: { timeout: 0.5 } }),
        ),
      );
      expect(results.at(-1)).toMatchObject({
        type: "run.failed",
        data: { code: "runner.timeout", retryable: true },
      });
      expect(test.host.activeRuns()).toEqual([]);
    });
  });
}
