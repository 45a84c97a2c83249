import { describe, expect, it } from "vitest";
import { z } from "zod";
import { asCustomChunk, defineTool, type RuntimeEvent } from "../src/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

// A tool that reaches for the bus on its context, as code written against the run context may.
const noteTool = defineTool({
  name: "note",
  description: "Emit an event of its own, then try to close the bus",
  inputSchema: z.object({ text: z.string() }),
  execute: async ({ text }, ctx) => {
    const event = ctx.eventBus.emit("custom.note", { text });
    await ctx.eventBus.close();
    return event.sequence;
  },
});

describe("ctx.eventBus inside a run", () => {
  it("puts what a tool emits into the run's numbered log, and cannot close the runtime's bus", async () => {
    const { runtime } = await runtimeWith(
      [{ toolCalls: [toolCall("note", { text: "hi" })] }, { text: "done" }, { text: "again" }],
      { tools: [noteTool] },
    );
    const seen: RuntimeEvent[] = [];
    runtime.eventBus.subscribe("*", (event) => {
      seen.push(event);
    });
    const chunks = await collect(runtime.stream({ agentId: "a", sessionId: "s", inputText: "go" }));
    // A custom event's chunk is read as one: its kind is not among the declared ones the chunk union narrows on.
    const note = chunks.map(asCustomChunk).find((chunk) => chunk?.kind === "custom.note");
    expect(note).toMatchObject({ payload: { text: "hi" } });
    expect(note?.sequence).toBeGreaterThan(0);
    const sequences = chunks.map((chunk) => chunk.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    const result = chunks.find((chunk) => chunk.kind === "tool.finished");
    expect(result?.payload).toMatchObject({ result: note?.sequence });
    // The bus beside the run saw the same event, with the run's ids.
    expect(seen.find((event) => event.kind === "custom.note")).toMatchObject({
      runId: note?.runId,
      sequence: note?.sequence,
    });
    // The tool's close() left the runtime's bus open: the next run's events still reach subscribers.
    const before = seen.length;
    await runtime.run({ agentId: "a", sessionId: "s", inputText: "again" });
    expect(seen.length).toBeGreaterThan(before);
    await runtime.close();
  });
});
