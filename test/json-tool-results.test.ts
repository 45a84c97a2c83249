import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { z } from "zod";
import { defineTool, getLogger, type Logger, type RuntimeEvent, type ToolMessage } from "../src/index.js";
import {
  type ChildRunResult,
  childProcessSuite,
  gaplessEvents,
  runChild,
  type StoreKind,
  withStore,
} from "./support/child-processes.js";
import { runtimeWith, toolCall } from "./support/harness.js";

/**
 * A tool result is brought to its JSON form at the tool boundary: what has a faithful form is converted the same
 * way on every store (in memory too), what has none fails the call with a typed error the model sees.
 */

const cyclic: Record<string, unknown> = { name: "node" };
cyclic.self = cyclic;

const tools = [
  defineTool({
    name: "stats",
    description: "Numbers a JSON encoder cannot take as they are",
    inputSchema: z.object({}),
    execute: () => ({
      n: 10n,
      huge: 2n ** 70n,
      tags: new Set(["a", "b"]),
      counts: new Map([["x", 1]]),
      at: new Date("2024-01-02T03:04:05Z"),
    }),
  }),
  defineTool({
    name: "graph",
    description: "A result that refers to itself",
    inputSchema: z.object({}),
    execute: () => cyclic,
  }),
];

let warn: MockInstance<Logger["warn"]>;
beforeEach(() => {
  warn = vi.spyOn(getLogger(), "warn").mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("tool results the model and the stores can hold", () => {
  it("converts what has a JSON form and fails a cyclic result with a typed error the model sees", async () => {
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("stats", {}, "s1"), toolCall("graph", {}, "g1")] }, { text: "done" }],
      { tools },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    const events: RuntimeEvent[] = await runtime.sessionManager.loadEvents(result.runId);
    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe("done");

    const [stats, graph] = model.requests[1]!.messages.filter(
      (message): message is ToolMessage => message.role === "tool",
    );
    expect(JSON.parse(stats!.content)).toEqual({
      n: 10,
      huge: "1180591620717411303424",
      tags: ["a", "b"],
      counts: { x: 1 },
      at: "2024-01-02T03:04:05.000Z",
    });
    expect(graph!.isError).toBe(true);
    expect(JSON.parse(graph!.content)).toEqual({
      ok: false,
      error: {
        code: "tool.result_not_json",
        message: "Tool 'graph' returned a value JSON cannot hold: a circular reference (back to $) at $.self",
        hint: expect.stringContaining("the tool must return plain data"),
      },
    });

    const completed = events.find((event) => event.kind === "tool.completed");
    expect(completed?.payload.result).toEqual(JSON.parse(stats!.content));
    const failed = events.find((event) => event.kind === "tool.failed");
    expect(failed?.payload).toMatchObject({ toolId: "graph", code: "tool.result_not_json" });
    // The developer hears of it too, with the tool and the path.
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining("Tool 'graph' returned a value JSON cannot hold"),
      expect.objectContaining({ toolId: "graph", path: "$.self" }),
    );
    await runtime.close();
  });
});

/**
 * The same on every persistent store, in a child process running the compiled package as a user runs it: the run
 * completes (the cyclic result fails only its call), and the store keeps its record, its events and its
 * transcript. Before, the final write threw on the BigInt and the store kept only the run's `created` record.
 * The child: test/support/json-result-child.mjs.
 */
const suite = childProcessSuite("keel-json-results-");
const CHILD = "test/support/json-result-child.mjs";

interface ChildResult extends ChildRunResult {
  storeError: string | null;
  shown: ToolMessage[];
}

const STATS = {
  n: 10,
  huge: "1180591620717411303424",
  tags: ["a", "b"],
  counts: { x: 1 },
  at: "2024-01-02T03:04:05.000Z",
};

describe.each(suite.stores)("tool results JSON cannot hold as they are, on $type", (kind: StoreKind) => {
  it.each([false, true])(
    "completes the run and keeps its events and transcript (durable: %s)",
    async (durable) => {
      const which = `json-${durable ? "durable" : "plain"}`;
      const runId = `run-${which}`;
      const sessionId = `session-${which}`;
      const [result] = (await runChild(CHILD, suite.build(), {
        store: { type: kind.type, config: kind.config(which) },
        runId,
        sessionId,
        durable,
      })) as ChildResult[];
      expect(result).toMatchObject({
        stopReason: "completed",
        finalOutput: "done",
        error: null,
        storeError: null,
      });
      const [stats, graph, note] = result!.shown;
      expect(JSON.parse(stats!.content)).toEqual(STATS);
      expect(graph!.isError).toBe(true);
      expect(JSON.parse(graph!.content).error).toMatchObject({
        code: "tool.result_not_json",
        message: "Tool 'graph' returned a value JSON cannot hold: a circular reference (back to $) at $.self",
      });
      expect(note!.content).toBe("noted");

      await withStore(kind, which, async (store) => {
        expect((await store.getRun(runId))?.stopReason).toBe("completed");
        const events = await gaplessEvents(store, runId);
        const completed = events
          .filter((event) => event.kind === "tool.completed")
          .map((event) => event.payload);
        expect(completed).toEqual([
          expect.objectContaining({ toolId: "stats", result: STATS }),
          expect.objectContaining({ toolId: "note", result: "noted" }),
        ]);
        expect(events.find((event) => event.kind === "tool.failed")?.payload).toMatchObject({
          toolId: "graph",
          code: "tool.result_not_json",
        });
        // The tool's own event is kept, its BigInt as a number and its cycle described.
        expect(events.find((event) => event.kind === "custom.note")?.payload).toMatchObject({
          count: 7,
          again: expect.stringMatching(/^\[Circular \$.*\.payload\]$/),
        });
        // A durable run's checkpoints were not lost to that event either.
        const kinds = events.map((event) => event.kind);
        expect(kinds).not.toContain("run.checkpoint_failed");
        if (durable) expect(kinds).toContain("run.checkpoint_saved");
        // The transcript as the model saw it: user, assistant with three calls, three results, the answer.
        const session = await store.loadMessages(sessionId);
        expect(session.map((message) => message.role)).toEqual([
          "user",
          "assistant",
          "tool",
          "tool",
          "tool",
          "assistant",
        ]);
        expect(session.filter((message) => message.role === "tool")).toEqual(result!.shown);
        // A durable run's own transcript (what a resume continues from) is whole as well.
        if (durable) expect(await store.loadRunMessages(runId)).toEqual(session);
      });
    },
  );
});
