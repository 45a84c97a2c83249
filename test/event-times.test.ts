import { afterEach, describe, expect, it, vi } from "vitest";
import type { RuntimeEvent } from "../src/index.js";
import { runtimeWith, toolCall } from "./support/harness.js";

describe("event times", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("usage.updated carries llm.finished's time; times never go back", async () => {
    const { runtime } = await runtimeWith([{ toolCalls: [toolCall("add", { a: 1, b: 2 })] }, { text: "3" }]);
    const events: RuntimeEvent[] = [];
    runtime.eventBus.subscribe("*", (event) => {
      events.push(event);
    });
    // A clock that moves on at every read, so two events that read it apart never share a time.
    let clock = Date.UTC(2030, 0, 1);
    vi.spyOn(Date, "now").mockImplementation(() => clock++);
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    vi.restoreAllMocks();
    await runtime.close();

    expect(result.stopReason).toBe("completed");
    const run = events.filter((event) => event.runId === result.runId);
    const usage = run.filter((event) => event.kind === "usage.updated");
    expect(usage).toHaveLength(2);
    for (const event of usage) {
      const before = run.find((other) => other.sequence === event.sequence - 1);
      expect(before?.kind).toBe("llm.finished");
      expect(event.timestampMs).toBe(before?.timestampMs);
    }
    // Every other event read the clock for itself.
    const times = run.filter((event) => event.kind !== "usage.updated").map((event) => event.timestampMs);
    expect(new Set(times).size).toBe(times.length);
    for (let index = 1; index < run.length; index++) {
      expect(run[index]!.timestampMs).toBeGreaterThanOrEqual(run[index - 1]!.timestampMs);
    }
  });
});
