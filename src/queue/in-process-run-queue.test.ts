import { describe, expect, it } from "vitest";
import { Runtime } from "../runtime/runtime.js";
import { scriptedModel } from "../testing/index.js";
import { importBullmq } from "./import-bullmq.js";

describe("the in_process run queue", () => {
  it("is the default: submit queues the run and this runtime executes it", async () => {
    const runtime = await Runtime.fromDict({
      agents: [{ id: "a", name: "A", llm: scriptedModel([{ text: "queued and done" }]) }],
    });
    try {
      expect(runtime.queue.type).toBe("in_process");
      expect(runtime.queue.distributed).toBe(false);
      const runId = await runtime.submit({ agentId: "a", inputText: "hi" });
      const kinds: string[] = [];
      let output: unknown;
      for await (const chunk of runtime.attach(runId)) {
        kinds.push(chunk.kind);
        if (chunk.kind === "run.finished") output = chunk.result.finalOutput;
      }
      expect(kinds[0]).toBe("run.started");
      expect(output).toBe("queued and done");
      expect(await runtime.getRun(runId)).toMatchObject({ status: "done", stopReason: "completed" });
      await expect(runtime.submit({ agentId: "a", inputText: "again", runId })).rejects.toThrow(
        `Run '${runId}' already exists`,
      );
    } finally {
      await runtime.close();
    }
  });
});

describe("the bullmq run queue without its packages", () => {
  it("is a PluginLoadError naming the package and how to install it", async () => {
    await expect(
      importBullmq({ bullmq: "keel-no-such-bullmq", ioredis: "keel-no-such-ioredis" }),
    ).rejects.toMatchObject({
      name: "PluginLoadError",
      code: "plugin.load",
      message: expect.stringContaining("keel-no-such-bullmq"),
      hint: "npm install bullmq ioredis",
    });
  });
});
