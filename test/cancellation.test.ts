import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { defineTool } from "../src/index.js";
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
    expect(runtime.cancel("r", { reason: "user pressed stop" })).toBe(true);
    expect(runtime.cancel("r")).toBe(false);
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
    expect(runtime.cancel("unknown-run")).toBe(false);
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
    runtime.cancel("b");
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
