import { describe, expectTypeOf, it } from "vitest";
import type { RunResult } from "../contracts/run-types.js";
import {
  asCustomChunk,
  type CustomChunk,
  isChunk,
  type RunStreamChunk,
  type RunStreamChunkKind,
  type RunStreamChunks,
  type StreamChunkOf,
} from "./stream-chunk.js";

declare const chunk: RunStreamChunk<{ sum: number }>;
declare const startKind: "run.started" | "step.started";

describe("RunStreamChunk, a union on kind", () => {
  it("narrows the payload by comparing kind", () => {
    if (chunk.kind === "llm.delta") expectTypeOf(chunk.payload.text).toEqualTypeOf<string>();
    if (chunk.kind === "tool.started")
      expectTypeOf(chunk.payload.params).toEqualTypeOf<Record<string, unknown>>();
    if (chunk.kind === "step.finished")
      expectTypeOf(chunk.payload.action).toEqualTypeOf<string | undefined>();
    switch (chunk.kind) {
      case "tool.suspended":
        expectTypeOf(chunk.payload.toolCallId).toEqualTypeOf<string>();
        break;
      case "usage.updated":
        expectTypeOf(chunk.payload.usage.totalTokens).toEqualTypeOf<number>();
        break;
    }
  });

  it("carries the run's output type to run.finished", () => {
    if (chunk.kind === "run.finished") {
      expectTypeOf(chunk.result).toEqualTypeOf<RunResult<{ sum: number }>>();
      expectTypeOf(chunk.payload.result.finalOutput).toEqualTypeOf<{ sum: number } | null>();
    } else {
      expectTypeOf(chunk.result).toEqualTypeOf<undefined>();
    }
  });

  it("shows a finished tool call as one kind, failed ones with ok: false", () => {
    if (chunk.kind === "tool.finished") {
      expectTypeOf(chunk.payload.toolCallId).toEqualTypeOf<string>();
      if (chunk.payload.ok === false) expectTypeOf(chunk.payload.error).toEqualTypeOf<string>();
      else expectTypeOf(chunk.payload.durationMs).toEqualTypeOf<number>();
    }
    expectTypeOf<"tool.completed">().not.toExtend<RunStreamChunkKind>();
    expectTypeOf<"tool.finished">().toExtend<RunStreamChunkKind>();
  });

  it("refuses a misspelt kind", () => {
    // @ts-expect-error no chunk has this kind
    if (chunk.kind === "llm.detla") return;
    // @ts-expect-error isChunk takes declared kinds only
    isChunk(chunk, "llm.detla");
    // @ts-expect-error neither does StreamChunkOf
    expectTypeOf<StreamChunkOf<"tool.complete">>().toBeObject();
  });

  it("narrows with isChunk as with a comparison", () => {
    if (isChunk(chunk, "llm.reasoning")) expectTypeOf(chunk.payload.text).toEqualTypeOf<string>();
    if (isChunk(chunk, startKind)) expectTypeOf(chunk.kind).toEqualTypeOf<"run.started" | "step.started">();
  });

  it("keeps every chunk readable before it is narrowed", () => {
    expectTypeOf(chunk.kind).toExtend<string>();
    expectTypeOf(chunk.sequence).toEqualTypeOf<number>();
    expectTypeOf(chunk.payload.anything).toEqualTypeOf<unknown>();
  });

  it("reaches custom events through asCustomChunk", () => {
    const custom = asCustomChunk(chunk);
    expectTypeOf(custom).toEqualTypeOf<CustomChunk | undefined>();
    if (custom?.kind === "my.event") expectTypeOf(custom.payload).toEqualTypeOf<Record<string, unknown>>();
  });

  it("types a filtered stream with the kinds it asked for and run.finished", () => {
    expectTypeOf<RunStreamChunks<string, "llm.delta">["kind"]>().toEqualTypeOf<
      "llm.delta" | "run.finished"
    >();
    expectTypeOf<RunStreamChunks<string, RunStreamChunkKind>>().toEqualTypeOf<RunStreamChunk<string>>();
  });
});
