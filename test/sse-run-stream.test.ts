import { describe, expect, it } from "vitest";
import { type SseChunk, sseRunStream } from "../src/server/sse-run-stream.js";

async function* chunksOf(items: readonly SseChunk[]): AsyncGenerator<SseChunk> {
  yield* items;
}

async function textOf(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

const OPTIONS = { heartbeatMs: 60_000, maxQueuedFrames: 16, stallTimeoutMs: 60_000 };

describe("sseRunStream", () => {
  it("shares a chunk's frame only among streams that present it alike", async () => {
    const chunk = { kind: "llm.delta", sequence: 3, sessionId: "t1~s", payload: { text: "hi" } };
    const as = (prefix: string) => (item: SseChunk) => ({
      ...item,
      sessionId: (item as typeof chunk).sessionId.slice(prefix.length),
    });
    const first = await textOf(
      sseRunStream(chunksOf([chunk]), { ...OPTIONS, present: as("t1~"), presentKey: "t1~" }),
    );
    expect(first).toBe(
      'id: 3\nevent: llm.delta\ndata: {"kind":"llm.delta","sequence":3,"sessionId":"s","payload":{"text":"hi"}}\n\n',
    );
    // The same key reuses the frame; another key makes its own from its own presentation.
    const again = await textOf(
      sseRunStream(chunksOf([chunk]), { ...OPTIONS, present: as("t1~"), presentKey: "t1~" }),
    );
    expect(again).toBe(first);
    const other = await textOf(
      sseRunStream(chunksOf([chunk]), { ...OPTIONS, present: as(""), presentKey: "" }),
    );
    expect(other).toContain('"sessionId":"t1~s"');
  });

  it("writes a heartbeat while no frame comes, then the frames", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    async function* slow(): AsyncGenerator<SseChunk> {
      await gate;
      yield { kind: "run.finished", sequence: 1 };
    }
    const stream = sseRunStream(slow(), { ...OPTIONS, heartbeatMs: 5 });
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    expect(decoder.decode((await reader.read()).value)).toBe(": ping\n\n");
    release();
    let rest = "";
    for (let read = await reader.read(); !read.done; read = await reader.read())
      rest += decoder.decode(read.value);
    expect(rest).toContain('id: 1\nevent: run.finished\ndata: {"kind":"run.finished","sequence":1}\n\n');
  });
});
