import { afterEach, describe, expect, it } from "vitest";
import { Runtime } from "../runtime/runtime.js";

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

async function echoRuntime(): Promise<Runtime> {
  const runtime = await Runtime.fromDict({ agents: [{ id: "echo", name: "Echo" }] });
  runtimes.push(runtime);
  return runtime;
}

describe("steering a run", () => {
  it("appends what arrived as user messages before the model call, so the model answers it", async () => {
    const runtime = await echoRuntime();
    const asked: AbortSignal[] = [];
    const queued = [["and one more thing", "really"]];
    const result = await runtime.runDetailed({
      agentId: "echo",
      inputText: "hello",
      steering: async (signal) => {
        asked.push(signal);
        return queued.shift() ?? [];
      },
    });
    expect(result.finalOutput).toBe("Echo: really (history=2)");
    expect(asked).toHaveLength(1);
    expect(asked[0]!.aborted).toBe(false);
  });

  it("keeps the steered messages in the session, so the next run remembers them", async () => {
    const runtime = await echoRuntime();
    await runtime.runDetailed({
      agentId: "echo",
      inputText: "hello",
      sessionId: "s-1",
      steering: async () => ["steered"],
    });
    const next = await runtime.runDetailed({ agentId: "echo", inputText: "again", sessionId: "s-1" });
    // hello, steered, the answer: three messages before the new one.
    expect(next.finalOutput).toBe("Echo: again (history=3)");
  });

  it("ends a run cancelled while it waits for steering without calling the model", async () => {
    const runtime = await echoRuntime();
    const controller = new AbortController();
    const result = await runtime.runDetailed({
      agentId: "echo",
      inputText: "hello",
      signal: controller.signal,
      steering: (signal) =>
        new Promise((resolve) => {
          signal.addEventListener("abort", () => resolve(["too late"]), { once: true });
          controller.abort();
        }),
    });
    expect(result.stopReason).toBe("cancelled");
    expect(result.usage.llmCalls).toBe(0);
  });

  it("fails the run with the steering source's error", async () => {
    const runtime = await echoRuntime();
    const result = await runtime.runDetailed({
      agentId: "echo",
      inputText: "hello",
      steering: async () => {
        throw new Error("the inbox is gone");
      },
    });
    expect(result.stopReason).toBe("failed");
    expect(result.error).toContain("the inbox is gone");
  });
});
