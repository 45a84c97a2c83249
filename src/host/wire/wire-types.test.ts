import { describe, expect, it } from "vitest";
import { langBotErrors, langBotResultErrors } from "../../../test/support/langbot-schemas.js";
import { parseActionFrame, successResponse } from "./action-frame.js";
import { AGENT_API_ERROR_CODES, AgentApiError } from "./api-error.js";
import {
  AgentRunnerManifestSchema,
  formatRunnerId,
  isCompatibleProtocolVersion,
  parseRunnerId,
} from "./manifest.js";
import { AgentRunContextSchema } from "./run-context.js";
import { parseRunResult } from "./run-result.js";
import { manifestForProfile } from "./wire-profile.js";

const manifest = AgentRunnerManifestSchema.parse({
  id: "plugin:keel/agents/helper",
  name: "helper",
  label: { en_US: "Helper" },
  capabilities: { streaming: true, tool_calling: true },
  permissions: { models: ["invoke", "stream"], tools: ["call"], history: ["page"], storage: ["binding"] },
});

describe("the manifest", () => {
  it("fills the protocol's defaults", () => {
    const bare = AgentRunnerManifestSchema.parse({ id: "plugin:a/b/c", name: "c", label: { en_US: "C" } });
    expect(bare.protocol_version).toBe("1");
    expect(bare.capabilities.event_context).toBe(true);
    expect(bare.capabilities.self_managed_context).toBe(true);
    expect(bare.capabilities.streaming).toBe(false);
    expect(bare.permissions.models).toEqual([]);
    expect(bare.context).toEqual({
      supports_history_pull: true,
      supports_history_search: false,
      supports_artifact_pull: true,
      owns_compaction: true,
      wants_static_context_refs: true,
    });
    expect(bare.config_schema).toEqual([]);
    expect(bare.metadata).toEqual({});
  });

  it("ignores unknown fields and refuses unknown operations", () => {
    const withExtra = AgentRunnerManifestSchema.safeParse({ ...manifest, future_field: 1 });
    expect(withExtra.success && !("future_field" in withExtra.data)).toBe(true);
    const badOperation = AgentRunnerManifestSchema.safeParse({
      ...manifest,
      permissions: { models: ["delete"] },
    });
    expect(badOperation.success).toBe(false);
    expect(AgentRunnerManifestSchema.safeParse({ ...manifest, id: "plugin:a/b" }).success).toBe(false);
  });

  it("parses runner ids strictly", () => {
    expect(parseRunnerId("plugin:a/b/c")).toEqual({ pluginAuthor: "a", pluginName: "b", runnerName: "c" });
    for (const bad of ["plugin:a/b", "plugin:a//c", "a/b/c", "plugin:a/b/c/d", "plugin: a/b/c"]) {
      expect(parseRunnerId(bad)).toBeNull();
    }
    expect(formatRunnerId({ pluginAuthor: "a", pluginName: "b", runnerName: "c" })).toBe("plugin:a/b/c");
  });

  it("checks the major protocol version", () => {
    expect(isCompatibleProtocolVersion("1")).toBe(true);
    expect(isCompatibleProtocolVersion("1.3")).toBe(true);
    expect(isCompatibleProtocolVersion(undefined)).toBe(true);
    expect(isCompatibleProtocolVersion("2")).toBe(false);
    expect(isCompatibleProtocolVersion("")).toBe(false);
  });

  it("is what LangBot's models accept, in both profiles", () => {
    expect(langBotErrors("AgentRunnerManifest", manifestForProfile(manifest, "seed"))).toEqual([]);
    expect(
      langBotErrors("AgentRunnerManifest", manifestForProfile(manifest, "langbot-4.11"), "langbot-4.11"),
    ).toEqual([]);
    // The seed shape is not the newer one: the check is not vacuous.
    expect(
      langBotErrors("AgentRunnerManifest", manifestForProfile(manifest, "seed"), "langbot-4.11"),
    ).not.toEqual([]);
  });
});

const context = {
  run_id: "run-1",
  trigger: { type: "message.received", source: "host_adapter", timestamp: 1_700_000_000 },
  event: { event_id: "host:abc", event_type: "message.received", source: "host_adapter", data: {} },
  conversation: { conversation_id: "c1" },
  actor: { actor_type: "user", actor_id: "u1" },
  input: { text: "hello" },
  delivery: { surface: "platform", supports_streaming: true },
  resources: { models: [{ model_id: "m1" }], tools: [{ tool_name: "lookup" }] },
  runtime: { trace_id: "run-1", deadline_at: 1_700_000_300.5, future: { kept: true } },
};

describe("the run context", () => {
  it("fills defaults and keeps fields it does not know", () => {
    const parsed = AgentRunContextSchema.parse(context);
    expect(parsed.context.inline_policy.mode).toBe("current_event");
    expect(parsed.context.available_apis.history_page).toBe(false);
    expect(parsed.state).toEqual({ conversation: {}, actor: {}, subject: {}, runner: {} });
    expect(parsed.runtime.host).toBe("langbot");
    expect(parsed.runtime.protocol_version).toBe("1");
    expect(parsed.runtime.future).toEqual({ kept: true });
    expect(langBotErrors("AgentRunContext", parsed)).toEqual([]);
  });

  it("requires the event: a context without one is an error, not a crash", () => {
    const { event: _event, ...withoutEvent } = context;
    expect(AgentRunContextSchema.safeParse(withoutEvent).success).toBe(false);
  });
});

describe("run results", () => {
  it("reads every known type and narrows its payload", () => {
    const delta = parseRunResult({
      run_id: "r",
      type: "message.delta",
      data: { chunk: { role: "assistant", content: "hi" } },
    });
    expect(delta.ok && delta.result?.type === "message.delta" && delta.result.data.chunk.content).toBe("hi");
    const state = parseRunResult({
      run_id: "r",
      type: "state.updated",
      data: { scope: "runner", key: "k", value: [1] },
    });
    expect(state.ok).toBe(true);
    const artifact = parseRunResult({
      run_id: "r",
      type: "artifact.created",
      data: { artifact_id: "a", artifact_type: "file", content_base64: "aGk=" },
    });
    expect(artifact.ok).toBe(true);
  });

  it("reads run.failed's text under error or message and writes error", () => {
    for (const key of ["error", "message"]) {
      const parsed = parseRunResult({ run_id: "r", type: "run.failed", data: { code: "x", [key]: "boom" } });
      expect(parsed.ok && parsed.result?.data).toEqual({ code: "x", error: "boom", retryable: false });
      expect(langBotResultErrors(parsed.ok ? parsed.result : undefined)).toEqual([]);
    }
  });

  it("keeps an unknown type as unknown and refuses a malformed known one", () => {
    const unknown = parseRunResult({ run_id: "r", type: "future.thing", data: { x: 1 } });
    expect(unknown.ok && unknown.unknown?.type).toBe("future.thing");
    const badScope = parseRunResult({
      run_id: "r",
      type: "state.updated",
      data: { scope: "global", key: "k", value: 1 },
    });
    expect(badScope).toMatchObject({ ok: false });
    expect(parseRunResult({ run_id: "r", type: "message.delta", data: {} })).toMatchObject({ ok: false });
    expect(parseRunResult("not an object")).toMatchObject({ ok: false });
  });
});

describe("action frames", () => {
  it("tells requests from responses and keeps the seq_id of a bad one", () => {
    expect(parseActionFrame('{"seq_id":1,"action":"x","data":{}}')).toMatchObject({
      ok: true,
      frame: { kind: "request" },
    });
    expect(parseActionFrame('{"seq_id":1,"code":0,"message":"","data":{}}')).toMatchObject({
      ok: true,
      frame: { kind: "response", response: { chunk_status: "continue" } },
    });
    expect(parseActionFrame("{nope")).toEqual({ ok: false, error: "message is not JSON" });
    expect(parseActionFrame("[1]")).toMatchObject({ ok: false });
    expect(parseActionFrame('{"seq_id":7,"action":"x","data":3}')).toMatchObject({ ok: false, seqId: 7 });
    expect(parseActionFrame('{"seq_id":7}')).toMatchObject({ ok: false, seqId: 7 });
  });

  it("writes frames LangBot's models accept", () => {
    expect(langBotErrors("ActionResponse", successResponse(3, { a: 1 }, "end"))).toEqual([]);
    expect(langBotErrors("ActionRequest", { seq_id: 1, action: "run_agent", data: {} })).toEqual([]);
  });
});

describe("AgentApiError", () => {
  it("round-trips its wire body", () => {
    const error = new AgentApiError(AGENT_API_ERROR_CODES.UNAUTHORIZED, "no", { details: { action: "x" } });
    expect(error.code).toBe("host.unauthorized");
    expect(langBotErrors("AgentAPIError", error.toBody())).toEqual([]);
    const back = AgentApiError.fromBody(error.toBody(), "fallback");
    expect([back.apiCode, back.message, back.details]).toEqual(["unauthorized", "no", { action: "x" }]);
    expect(AgentApiError.fromBody("garbage", "text").apiCode).toBe("runtime_error");
    expect(new AgentApiError("rate_limited", "slow down").retryable).toBe(true);
  });
});
