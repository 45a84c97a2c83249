import { describe, expectTypeOf, it } from "vitest";
import type { ModelStopReason, ModelUsage } from "../contracts/language-model.js";
import type { ResumeMode, RunResult, RunUsage } from "../contracts/run-types.js";
import type { ToolDecision } from "../contracts/tool-decision.js";
import type { ErrorDetails } from "../errors/keel-error.js";
import type { CheckpointPhase } from "../loop/run-state.js";
import type { McpConnectionMode } from "../mcp/mcp-toolset-options.js";
import type { MemoryWriteMode } from "../toolsets/memory/memory-toolset.js";
import type { EventName, EventPayloads } from "./event-schemas.js";

describe("EventPayloads, read from the event table", () => {
  it("types required keys as required and optional keys as optional", () => {
    expectTypeOf<EventPayloads["llm.delta"]>().toEqualTypeOf<{ text: string }>();
    expectTypeOf<EventPayloads["run.finished"]>().toEqualTypeOf<{ result: RunResult }>();
    expectTypeOf<EventPayloads["run.failed"]>().toEqualTypeOf<{
      error: string;
      errorDetails: ErrorDetails;
    }>();
    expectTypeOf<EventPayloads["tool.failed"]>().toEqualTypeOf<{
      toolCallId: string;
      toolId: string;
      error: string;
      code?: string;
      rule?: string;
      durationMs?: number;
    }>();
    expectTypeOf<keyof EventPayloads["context.assemble.started"]>().toEqualTypeOf<never>();
    expectTypeOf<EventPayloads["run.resume_attempted"]["checkpointId"]>().toEqualTypeOf<string | null>();
    expectTypeOf<EventPayloads["usage.updated"]["usage"]>().toEqualTypeOf<RunUsage>();
    expectTypeOf<EventPayloads["pattern.plan_created"]["plan"]>().toEqualTypeOf<string[]>();
  });

  it("writes out the same unions the types they report are declared with", () => {
    expectTypeOf<EventPayloads["tool.suspended"]["resumeMode"]>().toEqualTypeOf<ResumeMode>();
    expectTypeOf<EventPayloads["tool.decision"]["action"]>().toEqualTypeOf<ToolDecision["action"]>();
    expectTypeOf<EventPayloads["tool.decision"]["always"]>().toEqualTypeOf<ToolDecision["always"]>();
    expectTypeOf<NonNullable<EventPayloads["llm.finished"]["stopReason"]>>().toEqualTypeOf<ModelStopReason>();
    expectTypeOf<NonNullable<EventPayloads["llm.finished"]["usage"]>>().toEqualTypeOf<ModelUsage>();
    expectTypeOf<EventPayloads["tool.mcp.connect"]["mode"]>().toEqualTypeOf<McpConnectionMode>();
    expectTypeOf<EventPayloads["memory.write_mode"]["mode"]>().toEqualTypeOf<MemoryWriteMode>();
    expectTypeOf<
      NonNullable<EventPayloads["run.checkpoint_saved"]["phase"]>
    >().toEqualTypeOf<CheckpointPhase>();
  });

  it("names exactly the declared events", () => {
    expectTypeOf<"llm.delta">().toExtend<EventName>();
    expectTypeOf<"tool.finished">().not.toExtend<EventName>();
    // @ts-expect-error a misspelt event has no payload type
    expectTypeOf<EventPayloads["llm.detla"]>().toBeObject();
  });
});
