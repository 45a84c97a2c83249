import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import type { RunStreamChunk } from "../src/index.js";
import {
  approvalIdOf,
  runIdOfApproval,
  toUiMessageChunks,
  type UiMessageChunk,
  type UiMessageProfile,
  UiMessageTranslator,
  uiMessageFrame,
} from "../src/server/ui-message-stream/index.js";
import { messageOf, readChunks } from "./support/ui-message-client.js";

let sequence = 0;
function chunk(kind: string, payload: Record<string, unknown> = {}): RunStreamChunk {
  sequence++;
  const header = { runId: "r1", sessionId: "s1", agentId: "a", sequence, timestampMs: sequence };
  return {
    ...header,
    kind,
    payload,
    ...(kind === "run.finished" ? { result: payload.result } : {}),
  } as never;
}

function result(stopReason: string, extra: Record<string, unknown> = {}) {
  return { result: { runId: "r1", stopReason, finalOutput: null, pendingToolCalls: [], ...extra } };
}

function translate(chunks: RunStreamChunk[], profile: UiMessageProfile = "v6"): UiMessageChunk[] {
  const translator = new UiMessageTranslator({ profile });
  return [...chunks.flatMap((each) => translator.translate(each)), ...translator.end()];
}

/** The chunks through the given major's client: its SSE parser and schema, then its message builder. */
async function throughClient(chunks: UiMessageChunk[], major: "v5" | "v6", message?: UIMessage) {
  const body = `${chunks.map(uiMessageFrame).join("")}data: [DONE]\n\n`;
  const parsed = await readChunks(new Response(body), major);
  return messageOf(parsed, message);
}

const types = (chunks: UiMessageChunk[]) =>
  chunks.map((each) => each.type).filter((type) => !type.startsWith("data-"));

describe("UiMessageTranslator", () => {
  it("closes reasoning before text and text before a tool call; a failed call is a tool error", async () => {
    const input = [
      chunk("run.started", { resumed: false }),
      chunk("step.started", { step: 1 }),
      chunk("llm.reasoning", { text: "let me think" }),
      chunk("llm.delta", { text: "I will " }),
      chunk("llm.delta", { text: "add." }),
      chunk("tool.started", { toolCallId: "c1", toolId: "add", params: { a: 1 } }),
      chunk("tool.finished", { toolCallId: "c1", toolId: "add", error: "b is missing", ok: false }),
      chunk("step.finished", { step: 1 }),
      chunk("run.finished", result("completed")),
    ];
    const chunks = translate(input);
    expect(types(chunks)).toEqual([
      "start",
      "start-step",
      "reasoning-start",
      "reasoning-delta",
      "reasoning-end",
      "text-start",
      "text-delta",
      "text-delta",
      "text-end",
      "tool-input-available",
      "tool-output-error",
      "finish-step",
      "finish",
    ]);
    for (const major of ["v5", "v6"] as const) {
      const { message, errors } = await throughClient(translate(input, major), major);
      expect(errors).toEqual([]);
      expect(message.parts.map((part) => part.type)).toEqual([
        "data-keel-run",
        "step-start",
        "reasoning",
        "text",
        "tool-add",
      ]);
      expect(message.parts[4]).toMatchObject({ state: "output-error", errorText: "b is missing" });
    }
  });

  it("aborts a cancelled run after closing its open text and step, and sends no finish", async () => {
    const chunks = translate([
      chunk("run.started", { resumed: false }),
      chunk("step.started", { step: 1 }),
      chunk("llm.delta", { text: "half" }),
      chunk("run.cancelled", { reason: "user" }),
      chunk("run.finished", result("cancelled")),
    ]);
    expect(types(chunks)).toEqual([
      "start",
      "start-step",
      "text-start",
      "text-delta",
      "text-end",
      "finish-step",
      "abort",
    ]);
    for (const major of ["v5", "v6"] as const)
      expect((await throughClient(chunks, major)).errors).toEqual([]);
  });

  it("ends a stream that fails midway with an error and a closed, finished message", async () => {
    async function* failing(): AsyncGenerator<RunStreamChunk> {
      yield chunk("run.started", { resumed: false });
      yield chunk("step.started", { step: 1 });
      yield chunk("llm.delta", { text: "so far" });
      throw new Error("events lost");
    }
    const chunks: UiMessageChunk[] = [];
    for await (const each of toUiMessageChunks(failing(), { messageId: "m1" })) chunks.push(each);
    expect(chunks[0]).toEqual({ type: "start", messageId: "m1" });
    expect(types(chunks).slice(-5)).toEqual(["text-delta", "text-end", "error", "finish-step", "finish"]);
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "error" });
    expect((await throughClient(chunks, "v6")).errors).toEqual(["events lost"]);
  });

  it("asks for approval in v6 only; a denial is denied in v6 and a tool error in v5", async () => {
    const suspended = [
      chunk("run.started", { resumed: false }),
      chunk("step.started", { step: 1 }),
      chunk("tool.suspended", {
        toolCallId: "w1",
        toolId: "wipe",
        params: { path: "/" },
        resumeMode: "replay_tool_call",
      }),
      chunk("step.finished", { step: 1, action: "suspended" }),
      chunk("run.finished", result("suspended")),
    ];
    const denied = [
      chunk("run.started", { resumed: true }),
      chunk("tool.decision", { toolCallId: "w1", toolId: "wipe", action: "deny", reason: "no" }),
      chunk("tool.finished", { toolCallId: "w1", toolId: "wipe", error: "denied", ok: false }),
      chunk("run.finished", result("completed")),
    ];
    const v6 = translate(suspended);
    expect(v6).toContainEqual({
      type: "tool-approval-request",
      approvalId: approvalIdOf("r1", "w1"),
      toolCallId: "w1",
    });
    expect(runIdOfApproval(approvalIdOf("r1", "w.1"))).toBe("r1");
    expect(runIdOfApproval("someone-else")).toBeUndefined();
    const asked = await throughClient(v6, "v6");
    const v6Denied = translate(denied);
    expect(v6Denied.filter((each) => each.type.startsWith("tool-"))).toEqual([
      { type: "tool-output-denied", toolCallId: "w1" },
    ]);
    expect((await throughClient(v6Denied, "v6", asked.message)).message.parts).toContainEqual(
      expect.objectContaining({ type: "tool-wipe", state: "output-denied" }),
    );

    const v5 = translate(suspended, "v5");
    expect(types(v5)).not.toContain("tool-approval-request");
    expect(v5.at(-1)).toEqual({ type: "finish" });
    const asked5 = await throughClient(v5, "v5");
    expect(asked5.message.parts).toContainEqual(
      expect.objectContaining({ type: "tool-wipe", state: "input-available" }),
    );
    const v5Denied = translate(denied, "v5");
    expect(v5Denied).toContainEqual({ type: "tool-output-error", toolCallId: "w1", errorText: "no" });
    expect((await throughClient(v5Denied, "v5", asked5.message)).errors).toEqual([]);
  });

  it("follows a run across a suspension in one stream, as a re-attach replays it, into one message", async () => {
    const chunks = translate([
      chunk("run.started", { resumed: false }),
      chunk("step.started", { step: 1 }),
      chunk("tool.suspended", {
        toolCallId: "w1",
        toolId: "wipe",
        params: {},
        resumeMode: "replay_tool_call",
      }),
      chunk("step.finished", { step: 1 }),
      chunk("run.finished", result("suspended")),
      chunk("run.started", { resumed: true }),
      chunk("tool.decision", { toolCallId: "w1", toolId: "wipe", action: "approve" }),
      chunk("step.started", { step: 1, resumed: true }),
      chunk("tool.started", { toolCallId: "w1", toolId: "wipe", params: {} }),
      chunk("tool.finished", { toolCallId: "w1", toolId: "wipe", result: "ok" }),
      chunk("step.finished", { step: 1 }),
      chunk("run.finished", result("completed")),
    ]);
    expect(types(chunks).filter((type) => type === "start" || type === "finish")).toEqual([
      "start",
      "finish",
      "start",
      "finish",
    ]);
    expect(types(chunks).filter((type) => type === "tool-input-available")).toHaveLength(1);
    const { message, errors } = await throughClient(chunks, "v6");
    expect(errors).toEqual([]);
    expect(message.id).toBe("r1");
    expect(message.parts.filter((part) => part.type === "tool-wipe")).toMatchObject([
      { state: "output-available", output: "ok" },
    ]);
  });

  it("gives Keel's extras as data parts: usage replaced in place, artifacts, transient tool output", async () => {
    const input = [
      chunk("run.started", { resumed: false }),
      chunk("usage.updated", { usage: { totalTokens: 1 } }),
      chunk("step.started", { step: 1 }),
      chunk("tool.started", { toolCallId: "c1", toolId: "grep", params: {} }),
      chunk("tool.delta", { toolCallId: "c1", toolId: "grep", text: "line 1" }),
      chunk("tool.suspended", {
        toolCallId: "c2",
        toolId: "ask",
        params: {},
        resumeMode: "use_decision_as_tool_result",
      }),
      chunk("tool.decision", { toolCallId: "c2", toolId: "ask", action: "result", result: { answer: 42 } }),
      chunk("tool.finished", { toolCallId: "c1", toolId: "grep", result: ["line 1"] }),
      chunk("artifact", { name: "report", kind: "text", payload: "hello" }),
      chunk("usage.updated", { usage: { totalTokens: 7 } }),
      chunk("llm.called", { model: "m", hasTools: true }),
      chunk("run.finished", result("max_steps")),
    ];
    const chunks = translate(input);
    expect(chunks).toContainEqual({
      type: "data-keel-tool-delta",
      data: { toolCallId: "c1", text: "line 1" },
      transient: true,
    });
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "other" });
    for (const major of ["v5", "v6"] as const) {
      const { message, errors } = await throughClient(translate(input, major), major);
      expect(errors).toEqual([]);
      const data = message.parts.filter((part) => part.type.startsWith("data-")) as {
        type: string;
        data: unknown;
      }[];
      expect(data.filter((part) => part.type === "data-keel-usage")).toEqual([
        expect.objectContaining({ data: { totalTokens: 7 } }),
      ]);
      expect(data.map((part) => part.type)).toEqual([
        "data-keel-run",
        "data-keel-usage",
        "data-keel-suspended",
        "data-keel-artifact",
      ]);
      expect(message.parts).toContainEqual(
        expect.objectContaining({ type: "tool-ask", state: "output-available", output: { answer: 42 } }),
      );
      expect(data[0]!.data).toMatchObject({
        runId: "r1",
        sessionId: "s1",
        agentId: "a",
        stopReason: "max_steps",
      });
    }
  });

  it("gives a v7 client the v6 chunks, none of the types only v7 knows", () => {
    const input = [
      chunk("run.started", { resumed: false }),
      chunk("step.started", { step: 1 }),
      chunk("llm.reasoning", { text: "hm" }),
      chunk("llm.delta", { text: "hi" }),
      chunk("tool.suspended", {
        toolCallId: "w1",
        toolId: "wipe",
        params: {},
        resumeMode: "replay_tool_call",
      }),
      chunk("step.finished", { step: 1 }),
      chunk("run.finished", result("suspended")),
      chunk("run.started", { resumed: true }),
      chunk("tool.decision", { toolCallId: "w1", toolId: "wipe", action: "deny" }),
      chunk("run.finished", result("failed", { error: "x" })),
    ];
    const v7 = translate(input, "v7");
    expect(v7).toEqual(translate(input, "v6"));
    const v7Only = ["tool-approval-response", "reset-step", "custom", "reasoning-file", "steering-message"];
    expect(v7.filter((each) => v7Only.includes(each.type))).toEqual([]);
  });
});
