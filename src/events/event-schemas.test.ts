import { describe, expect, it } from "vitest";
import { checkEventPayload, EVENT_SCHEMAS, getEventSchema, hasRequiredPayload } from "./event-schemas.js";

const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*$/;

describe("EVENT_SCHEMAS", () => {
  it("declares exactly the events Keel emits, in taxonomy order", () => {
    expect(Object.keys(EVENT_SCHEMAS)).toEqual([
      ...["run.started", "run.finished", "run.failed", "run.cancelled", "step.started", "step.finished"],
      ...["llm.called", "llm.delta", "llm.reasoning", "llm.finished", "llm.failed", "usage.updated"],
      ...[
        "budget.cost_skipped",
        "tool.started",
        "tool.delta",
        "tool.completed",
        "tool.failed",
        "tool.suspended",
      ],
      ...[
        "tool.decision",
        "tool.retry_requested",
        "tool.batch.started",
        "tool.batch.completed",
        "tool.preflight",
      ],
      ...[
        "tool.mcp.preflight",
        "tool.mcp.connect",
        "tool.mcp.call",
        "tool.mcp.close",
        "tool.background.submitted",
      ],
      ...["artifact", "validation.retry", "pattern.step_started", "pattern.step_finished", "pattern.phase"],
      ...["pattern.plan_created", "context.assemble.started", "context.assemble.completed"],
      ...[
        "memory.inject.started",
        "memory.inject.completed",
        "memory.inject_failed",
        "memory.writeback.started",
      ],
      ...[
        "memory.writeback.completed",
        "memory.writeback_failed",
        "memory.write_mode",
        "session.acquired",
        "run.checkpoint_saved",
      ],
      ...["run.checkpoint_failed", "run.resume_attempted", "run.resume_succeeded", "run.resume_exhausted"],
      "tool.outcome_unknown",
      ...["run.durable_idempotency_warning", "config.reloaded", "agent.reloaded", "permissions.computed"],
    ]);
  });

  it("names each schema after its key, with camelCase payload keys and a one-sentence description", () => {
    for (const [name, schema] of Object.entries(EVENT_SCHEMAS)) {
      expect(schema.name).toBe(name);
      for (const key of [...schema.requiredPayload, ...schema.optionalPayload])
        expect(key, name).toMatch(CAMEL_CASE);
      const overlap = schema.requiredPayload.filter((key) => schema.optionalPayload.includes(key));
      expect(overlap, name).toEqual([]);
      expect(schema.description, name).toMatch(/^[A-Z`].*\.$/);
    }
  });

  it("matches the payloads the stream documents", () => {
    expect(EVENT_SCHEMAS["tool.suspended"]).toMatchObject({
      requiredPayload: ["toolCallId", "toolId", "params", "resumeMode"],
      optionalPayload: ["reason"],
    });
    expect(EVENT_SCHEMAS["run.failed"]?.requiredPayload).toEqual(["error", "errorDetails"]);
    expect(EVENT_SCHEMAS["run.cancelled"]).toMatchObject({
      requiredPayload: [],
      optionalPayload: ["reason"],
    });
    expect(EVENT_SCHEMAS["llm.finished"]?.optionalPayload).toEqual(["usage", "stopReason", "durationMs"]);
  });

  it("is frozen", () => {
    expect(Object.isFrozen(EVENT_SCHEMAS)).toBe(true);
    expect(Object.isFrozen(EVENT_SCHEMAS["run.started"]?.requiredPayload)).toBe(true);
    expect(Object.isFrozen(EVENT_SCHEMAS["run.started"]?.fields)).toBe(true);
    expect(Object.isFrozen(EVENT_SCHEMAS["run.started"]?.fields.resumed)).toBe(true);
  });

  it("types every payload key, required and optional, with a named marker", () => {
    for (const [name, schema] of Object.entries(EVENT_SCHEMAS)) {
      expect(Object.keys(schema.fields), name).toEqual([
        ...schema.requiredPayload,
        ...schema.optionalPayload,
      ]);
      for (const field of Object.values(schema.fields)) {
        expect(field.name, name).toMatch(/\S/);
        expect(typeof field.is, name).toBe("function");
      }
    }
    expect(EVENT_SCHEMAS["llm.delta"]?.fields.text?.name).toBe("string");
    expect(EVENT_SCHEMAS["run.resume_attempted"]?.fields.checkpointId?.name).toBe("string | null");
    expect(EVENT_SCHEMAS["tool.decision"]?.fields.action?.name).toBe('"approve" | "deny" | "result"');
    expect(EVENT_SCHEMAS["tool.suspended"]?.fields.resumeMode?.name).toBe("ResumeMode");
  });
});

describe("checkEventPayload", () => {
  it("lists missing required keys in declaration order", () => {
    expect(checkEventPayload("tool.completed", { toolId: "add" })).toEqual([
      "toolCallId",
      "result",
      "durationMs",
    ]);
    expect(checkEventPayload("run.started", { resumed: false })).toEqual([]);
  });

  it("accepts a key that is present even when its value is undefined or null", () => {
    expect(
      checkEventPayload("tool.completed", { toolCallId: "c", toolId: "t", result: undefined, durationMs: 1 }),
    ).toEqual([]);
    expect(checkEventPayload("tool.decision", { toolCallId: "c", toolId: "t", action: null })).toEqual([]);
  });

  it("passes undeclared names and inherited object keys unchecked", () => {
    expect(checkEventPayload("my.event", {})).toEqual([]);
    expect(checkEventPayload("toString", {})).toEqual([]);
    expect(getEventSchema("constructor")).toBeUndefined();
  });

  it("agrees with hasRequiredPayload", () => {
    const schema = getEventSchema("llm.called");
    if (!schema) throw new Error("llm.called is declared");
    expect(hasRequiredPayload(schema, { model: "m", hasTools: false })).toBe(true);
    expect(hasRequiredPayload(schema, { model: "m" })).toBe(false);
  });
});
