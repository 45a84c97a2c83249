import { describe, expect, it } from "vitest";
import type { RunState } from "../src/loop/run-state.js";
import { type ChildRunResult, childProcessSuite, runChild, withStore } from "./support/child-processes.js";

/**
 * A durable run traced in one process, suspended for an approval, and decided in another: the second process's
 * spans continue the first one's trace, its `invoke_agent` span a child of the run's first span, because the
 * run's checkpoint kept the trace context. The processes: test/support/otel-child.mjs.
 */

const suite = childProcessSuite("keel-otel-");
const CHILD = "test/support/otel-child.mjs";

interface ChildSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  attributes: Record<string, unknown>;
  events: string[];
}

describe("otel_bridge across processes", () => {
  it("continues the run's trace in the process that resumes it", async () => {
    const sqlite = suite.stores.find((kind) => kind.type === "sqlite")!;
    const spec = {
      store: { type: "sqlite", config: sqlite.config("otel") },
      runId: "traced-run",
      sessionId: "traced-session",
    };
    const [started, firstSpans] = (await runChild(CHILD, suite.build(), { ...spec, action: "start" })) as [
      ChildRunResult,
      ChildSpan[],
    ];
    expect(started.stopReason).toBe("suspended");
    const first = firstSpans.find((span) => span.name === "invoke_agent payer")!;
    expect(first.parentSpanId).toBeNull();
    expect(first.events).toContain("keel.run.suspended");

    const checkpoints = await withStore(sqlite, "otel", async (store) => {
      const ids = await store.listCheckpoints("traced-session");
      return Promise.all(
        ids.map(
          async (id) => (await store.loadCheckpoint("traced-session", id))?.state as RunState | undefined,
        ),
      );
    });
    expect(checkpoints.length).toBeGreaterThan(0);
    for (const state of checkpoints) {
      expect(state?.traceContext).toEqual({ traceparent: `00-${first.traceId}-${first.spanId}-01` });
    }

    const [decided, secondSpans] = (await runChild(CHILD, suite.build(), { ...spec, action: "decide" })) as [
      ChildRunResult,
      ChildSpan[],
    ];
    expect(decided.stopReason).toBe("completed");
    const segment = secondSpans.find((span) => span.name === "invoke_agent payer")!;
    expect(segment.traceId).toBe(first.traceId);
    expect(segment.parentSpanId).toBe(first.spanId);
    expect(segment.attributes).toMatchObject({
      "keel.run.resumed": true,
      "keel.run.stop_reason": "completed",
    });
    expect(segment.events).toEqual(["keel.run.resumed", "keel.tool.decision"]);
    const children = secondSpans.filter((span) => span !== segment);
    expect(children.map((span) => span.name).sort()).toEqual(["chat gpt-test", "execute_tool pay"]);
    for (const span of children) {
      expect(span.traceId).toBe(first.traceId);
      expect(span.parentSpanId).toBe(segment.spanId);
    }
  }, 60_000);
});
