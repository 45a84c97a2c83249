import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkEventPayload } from "../src/events/event-schemas.js";
import {
  BasePattern,
  defineTool,
  type Logger,
  registerPlugin,
  type StepAction,
  setLogger,
} from "../src/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

/**
 * Run events are not checked against EVENT_SCHEMAS as they are emitted (that would cost every event); this test
 * checks that every event the loop emits in a varied run carries its required payload keys.
 */
describe("the loop's own events match EVENT_SCHEMAS", () => {
  it("in a run with tools, failures, deltas, structured output and a suspension", async () => {
    const broken = defineTool({
      name: "broken",
      description: "",
      execute: () => {
        throw new Error("no");
      },
    });
    const gated = defineTool({ name: "gated", description: "", approvalMode: "always", execute: () => "x" });
    const { runtime } = await runtimeWith(
      [
        { toolCalls: [toolCall("add", { a: 1, b: 2 }), toolCall("broken", {}), toolCall("nope", {})] },
        { deltas: ['{"v":', " 1}"], reasoning: "thinking" },
        { text: '{"v": 2}' },
      ],
      { tools: [(await import("./support/harness.js")).addTool, broken, gated] },
    );
    const outputType = z.object({ v: z.literal(2) });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go", outputType }));
    const suspended = await runtimeWith([{ toolCalls: [toolCall("gated", {})] }], { tools: [gated] });
    chunks.push(...(await collect(suspended.runtime.stream({ agentId: "a", inputText: "go" }))));
    const failing = await runtimeWith([{ error: { type: "rate_limit", message: "slow down" } }]);
    chunks.push(...(await collect(failing.runtime.stream({ agentId: "a", inputText: "go" }))));
    const kinds = new Set(chunks.map((chunk) => chunk.kind));
    for (const kind of [
      "validation.retry",
      "tool.suspended",
      "llm.failed",
      "run.failed",
      "tool.finished",
      "llm.delta",
    ]) {
      expect(kinds).toContain(kind);
    }
    const events = [
      ...(await runtime.sessionManager.loadEvents(chunks[0]!.runId)),
      ...chunks.filter((chunk) => chunk.kind !== "tool.finished"),
    ];
    const problems = events
      .map((event) => [event.kind, checkEventPayload(event.kind, event.payload)] as const)
      .filter(([, missing]) => missing.length > 0);
    expect(problems).toEqual([]);
    await Promise.all([runtime.close(), suspended.runtime.close(), failing.runtime.close()]);
  });

  it("warns, never throws, when a pattern emits a declared event without a required key", async () => {
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (message) => warnings.push(message), error() {} };
    const previous = setLogger(logger);
    class Noisy extends BasePattern {
      async react(): Promise<StepAction> {
        this.emit("pattern.plan_created", {});
        return { type: "final", output: "ok" };
      }
    }
    registerPlugin("pattern", "noisy", () => () => new Noisy());
    try {
      const { runtime } = await runtimeWith([], { pattern: { type: "noisy" } });
      expect(await runtime.run({ agentId: "a", inputText: "go" })).toBe("ok");
      expect(warnings).toEqual(["event pattern.plan_created is missing required payload key(s): plan"]);
      await runtime.close();
    } finally {
      setLogger(previous);
    }
  });
});
