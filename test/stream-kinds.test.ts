import { describe, expect, it } from "vitest";
import { ConfigError, EVENT_SCHEMAS, RunStreamChunkKind } from "../src/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

/** A stream's `kinds` filter: only kinds a chunk can have, and `run.finished` always comes last. */

describe("stream({ kinds })", () => {
  it("ends with run.finished even when kinds leaves it out", async () => {
    const { runtime } = await runtimeWith([{ deltas: ["a", "b"] }]);
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }, { kinds: ["llm.delta"] }));
    expect(chunks.map((chunk) => chunk.kind)).toEqual(["llm.delta", "llm.delta", "run.finished"]);
    expect(chunks.at(-1)!.result?.stopReason).toBe("completed");
    const replayed = await collect(runtime.attach(chunks[0]!.runId, { kinds: ["tool.finished"] }));
    expect(replayed.map((chunk) => chunk.kind)).toEqual(["run.finished"]);
    await runtime.close();
  });

  it("refuses a kind no chunk has, with the nearest kind and the known ones in the hint", async () => {
    const { runtime } = await runtimeWith([{ text: "x" }]);
    let refused: unknown;
    try {
      // @ts-expect-error a misspelt kind does not compile; a caller without types gets the typed error
      runtime.stream({ agentId: "a", inputText: "go" }, { kinds: ["llm.detla"] });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ConfigError);
    const error = refused as ConfigError;
    expect(error.message).toBe("Unknown stream chunk kind 'llm.detla'");
    expect(error.hint).toMatch(/^Did you mean 'llm\.delta'\? Chunk kinds: run\.started, /);
    expect(error.hint).toContain("tool.finished");
    // @ts-expect-error tool.completed is not a chunk kind (it shows as tool.finished)
    expect(() => runtime.attach("any", { kinds: ["tool.completed"] })).toThrow(
      expect.objectContaining({
        hint: expect.stringMatching(/^The stream shows tool\.completed as tool\.finished/),
      }),
    );
    // @ts-expect-error not a chunk kind
    expect(() => runtime.stream({ runId: "any", decisions: [] }, { kinds: ["nothing.like.it"] })).toThrow(
      ConfigError,
    );
    // Nothing started.
    expect(await runtime.listRuns()).toEqual([]);
    await runtime.close();
  });

  it("accepts every declared event and every stream kind", async () => {
    const { runtime } = await runtimeWith([{ toolCalls: [toolCall("add", { a: 1, b: 2 })] }, { text: "3" }]);
    const kinds = [
      ...Object.values(RunStreamChunkKind),
      ...Object.keys(EVENT_SCHEMAS).filter((name) => name !== "tool.completed" && name !== "tool.failed"),
    ] as RunStreamChunkKind[];
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }, { kinds }));
    const all = await collect(runtime.attach(chunks[0]!.runId));
    expect(chunks.map((chunk) => chunk.sequence)).toEqual(all.map((chunk) => chunk.sequence));
    await runtime.close();
  });
});
