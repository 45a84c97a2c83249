import { getEventListeners } from "node:events";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { DecisionError, defineTool, Runtime } from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";
import { collect, deferred, runtimeWith, toolCall } from "./support/harness.js";

function hangingTool(started: () => void, aborted: (reason: unknown) => void) {
  return defineTool({
    name: "hang",
    description: "waits until aborted",
    execute: (_input, ctx) =>
      new Promise((_resolve, reject) => {
        started();
        ctx.signal.addEventListener("abort", () => {
          aborted(ctx.signal.reason);
          reject(new Error("stopped"));
        });
      }),
  });
}

describe("cancellation", () => {
  it("cancel(runId) mid-tool ends the run cancelled, aborts the tool, and still records the call's result", async () => {
    const started = deferred();
    const reasons: unknown[] = [];
    const { runtime } = await runtimeWith([{ toolCalls: [toolCall("hang", {}, "h1")] }, { text: "never" }], {
      tools: [hangingTool(started.resolve, (reason) => reasons.push(reason))],
    });
    const streaming = collect(runtime.stream({ agentId: "a", runId: "r", inputText: "go" }));
    await started.promise;
    expect(await runtime.cancel("r", { reason: "user pressed stop" })).toBe(true);
    expect(await runtime.cancel("r")).toBe(false);
    const chunks = await streaming;
    const result = chunks.at(-1)!.result!;
    expect(result.stopReason).toBe("cancelled");
    expect(result.termination).toEqual({ type: "cancelled", value: "user pressed stop" });
    expect(result.errorDetails?.code).toBe("run.cancelled");
    expect(reasons).toEqual([{ type: "cancelled", value: "user pressed stop" }]);
    expect(chunks.find((chunk) => chunk.kind === "tool.finished")!.payload).toMatchObject({
      toolCallId: "h1",
      code: "tool.cancelled",
    });
    expect(chunks.some((chunk) => chunk.kind === "run.cancelled")).toBe(true);
    expect(await runtime.cancel("unknown-run")).toBe(false);
    await runtime.close();
  });

  it("aborting the request's signal cancels the run", async () => {
    const started = deferred();
    const { runtime } = await runtimeWith([{ toolCalls: [toolCall("hang", {})] }], {
      tools: [hangingTool(started.resolve, () => {})],
    });
    const controller = new AbortController();
    const done = runtime.runDetailed({ agentId: "a", inputText: "go", signal: controller.signal });
    await started.promise;
    controller.abort();
    expect((await done).stopReason).toBe("cancelled");
    await runtime.close();
  });

  it("stops listening to a long-lived signal once the run ends", async () => {
    const { runtime } = await runtimeWith([{ text: "one" }, { text: "two" }]);
    const controller = new AbortController();
    await runtime.run({ agentId: "a", inputText: "go", signal: controller.signal });
    await runtime.run({ agentId: "a", inputText: "go", signal: controller.signal });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    await runtime.close();
  });

  it("a tool with interruptBehavior block finishes before the run ends cancelled", async () => {
    const started = deferred();
    const release = deferred<string>();
    const careful = defineTool({
      name: "careful",
      description: "",
      interruptBehavior: "block",
      execute: () => {
        started.resolve();
        return release.promise;
      },
    });
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("careful", {})] }, { text: "never" }],
      {
        tools: [careful],
      },
    );
    const done = runtime.runDetailed({ agentId: "a", runId: "b", inputText: "go" });
    await started.promise;
    await runtime.cancel("b");
    release.resolve("written");
    const result = await done;
    expect(result.stopReason).toBe("cancelled");
    expect(result.usage.toolCalls).toBe(1);
    expect(model.callCount).toBe(1);
    await runtime.close();
  });

  it("close() cancels live runs and waits for them", async () => {
    const started = deferred();
    const { runtime } = await runtimeWith([{ toolCalls: [toolCall("hang", {})] }], {
      tools: [hangingTool(started.resolve, () => {})],
    });
    const done = runtime.runDetailed({ agentId: "a", inputText: "go" });
    await started.promise;
    await runtime.close();
    expect((await done).stopReason).toBe("cancelled");
    await expect(runtime.runDetailed({ agentId: "a", inputText: "again" })).rejects.toThrow(
      "The runtime is closed",
    );
  });
});

/** A config on a sqlite store, so a second runtime is a process that does not hold the first one's runs. */
async function storedConfig() {
  const dir = await mkdtemp(path.join(tmpdir(), "keel-cancel-"));
  const pay = defineTool({
    name: "pay",
    description: "Pay (needs approval)",
    inputSchema: z.object({ amount: z.number() }),
    approvalMode: "always",
    execute: ({ amount }) => `paid ${amount}`,
  });
  const model = scriptedModel([{ toolCalls: [toolCall("pay", { amount: 5 }, "p1")] }, { text: "paid" }]);
  return {
    session: { type: "sqlite", config: { db_path: path.join(dir, "keel.db") } },
    agents: [{ id: "a", name: "A", tools: [pay], llm: model }],
  };
}

describe("cancel(runId) of a waiting run", () => {
  it("ends a suspended run no process holds in the store: done, cancelled, run.finished in its log", async () => {
    const config = await storedConfig();
    const first = await Runtime.fromDict(config);
    const suspended = await first.runDetailed({ agentId: "a", runId: "w", sessionId: "s", inputText: "pay" });
    expect(suspended.stopReason).toBe("suspended");
    await first.close();

    const runtime = await Runtime.fromDict(config);
    try {
      const before = await runtime.sessionManager.loadEvents("w");
      const following = collect(runtime.attach("w", { afterSequence: before.at(-1)!.sequence }));
      expect(await runtime.cancel("w", { reason: "changed my mind" })).toBe(true);
      expect(await runtime.getRun("w")).toMatchObject({
        status: "done",
        stopReason: "cancelled",
        termination: { type: "cancelled", value: "changed my mind" },
        pendingToolCalls: [],
      });
      const events = await runtime.sessionManager.loadEvents("w");
      expect(events.at(-1)!.kind).toBe("run.finished");
      expect(events.at(-1)!.result).toMatchObject({ stopReason: "cancelled" });
      // An attachment that waited on the run sees it end; one made afterwards replays the end.
      const followed = await following;
      expect(followed.at(-1)).toMatchObject({ kind: "run.finished", result: { stopReason: "cancelled" } });
      const replayed = await collect(runtime.attach("w"));
      expect(replayed.map((chunk) => chunk.sequence)).toEqual(events.map((event) => event.sequence));
      await expect(
        runtime.decide({ runId: "w", decisions: [{ toolCallId: "p1", action: "approve" }] }),
      ).rejects.toBeInstanceOf(DecisionError);
      // The session's transcript stays valid for its next run: the model's call has its one result.
      const messages = await runtime.sessionManager.loadMessages("s");
      expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
      expect(messages[2]).toMatchObject({ toolCallId: "p1", isError: true });
      // Twice is harmless.
      expect(await runtime.cancel("w")).toBe(false);
      expect(await runtime.getRun("w")).toMatchObject({ status: "done", stopReason: "cancelled" });
    } finally {
      await runtime.close();
    }
  });

  it("ends a created run, queued behind another run of its session, before it starts", async () => {
    const started = deferred();
    const release = deferred<string>();
    const slow = defineTool({
      name: "slow",
      description: "",
      execute: () => {
        started.resolve();
        return release.promise;
      },
    });
    const { runtime } = await runtimeWith(
      [{ toolCalls: [toolCall("slow", {})] }, { text: "done" }, { text: "never" }],
      { tools: [slow] },
    );
    try {
      const holding = runtime.runDetailed({ agentId: "a", runId: "h", sessionId: "q", inputText: "go" });
      await started.promise;
      const queued = runtime.runDetailed({ agentId: "a", runId: "c", sessionId: "q", inputText: "later" });
      await expect.poll(() => runtime.getRun("c").then((record) => record?.status)).toBe("created");
      expect(await runtime.cancel("c")).toBe(true);
      release.resolve("ok");
      expect((await holding).stopReason).toBe("completed");
      expect((await queued).stopReason).toBe("cancelled");
      expect(await runtime.getRun("c")).toMatchObject({ status: "done", stopReason: "cancelled" });
    } finally {
      await runtime.close();
    }
  });
});
