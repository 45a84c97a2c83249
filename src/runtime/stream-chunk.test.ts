import { describe, expect, it } from "vitest";
import { RuntimeEvent } from "../contracts/runtime-event.js";
import { asCustomChunk, isChunk, toStreamChunk } from "./stream-chunk.js";

function chunkOf(kind: string, payload: Record<string, unknown> = {}) {
  return toStreamChunk(new RuntimeEvent(kind, payload, 1, "r", "s", "a", 1));
}

describe("stream chunks", () => {
  it("isChunk compares the kind", () => {
    expect(isChunk(chunkOf("llm.delta", { text: "hi" }), "llm.delta")).toBe(true);
    expect(isChunk(chunkOf("llm.delta", { text: "hi" }), "llm.reasoning")).toBe(false);
    expect(isChunk(chunkOf("tool.completed"), "tool.finished")).toBe(true);
  });

  it("asCustomChunk gives back a chunk whose kind Keel does not declare, and nothing for declared kinds", () => {
    const custom = chunkOf("my.event", { n: 1 });
    expect(asCustomChunk(custom)).toBe(custom);
    expect(asCustomChunk(custom)?.payload).toEqual({ n: 1 });
    for (const kind of ["llm.delta", "run.finished", "tool.completed", "tool.failed", "permissions.computed"])
      expect(asCustomChunk(chunkOf(kind)), kind).toBeUndefined();
  });

  it("shows a finished tool call as tool.finished, a failed one with ok: false", () => {
    expect(chunkOf("tool.failed", { error: "no" })).toMatchObject({
      kind: "tool.finished",
      payload: { error: "no", ok: false },
    });
    const completed = chunkOf("tool.completed", { result: 1 });
    expect(completed.kind).toBe("tool.finished");
    expect(completed.payload).toEqual({ result: 1 });
  });
});
