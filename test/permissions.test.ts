import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { type Message, Runtime } from "../src/index.js";
import { LOADED_SKILLS_STATE_KEY } from "../src/permissions/run-policy.js";
import { scriptedModel } from "../src/testing/index.js";

/**
 * The effective permission policy in runs: refusals are tool results the model sees while the run goes on,
 * destructive tools need both `enable` and an approval, the policy is inspectable and logged once per run, and
 * a loaded skill narrows it.
 */

const base = mkdtempSync(path.join(tmpdir(), "keel-perm-"));
const ws = path.join(base, "ws");

afterAll(() => rmSync(base, { recursive: true, force: true }));
beforeEach(() => {
  rmSync(ws, { recursive: true, force: true });
  mkdirSync(ws);
  writeFileSync(path.join(ws, "old.txt"), "old");
});

function toolMessages(messages: readonly Message[]) {
  return messages.filter((message): message is Extract<Message, { role: "tool" }> => message.role === "tool");
}

async function agentRuntime(
  model: ReturnType<typeof scriptedModel>,
  extra: Record<string, unknown> = {},
  top: Record<string, unknown> = {},
) {
  return Runtime.fromDict({
    ...top,
    agents: [
      {
        id: "a",
        name: "A",
        llm: model,
        tools: [
          { id: "fs", type: "filesystem", config: { tools: ["read_file", "write_file", "delete_file"] } },
        ],
        sandbox: { roots: [{ path: ws, mode: "rw" }] },
        ...extra,
      },
    ],
  });
}

function recordEvents(runtime: Runtime) {
  const events: { kind: string; payload: Record<string, unknown> }[] = [];
  runtime.eventBus.subscribe("*", (event) => {
    events.push({ kind: event.kind, payload: event.payload });
  });
  return events;
}

describe("permission refusals through the ToolGate", () => {
  it("refuses delete_file without enable: a tool result naming the rule, and the run goes on", async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { id: "d", name: "delete_file", arguments: { path: "old.txt" } },
          { id: "r", name: "read_file", arguments: { path: "old.txt" } },
        ],
      },
      { text: "could not delete" },
    ]);
    const runtime = await agentRuntime(model);
    const events = recordEvents(runtime);
    const result = await runtime.runDetailed({ agentId: "a", inputText: "clean up" });
    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe("could not delete");
    expect(existsSync(path.join(ws, "old.txt"))).toBe(true);

    const [refused, read] = toolMessages(model.requests[1]!.messages);
    expect(refused!.isError).toBe(true);
    const body = JSON.parse(refused!.content as string);
    expect(body).toEqual({
      ok: false,
      error: { code: "tool.permission_denied", message: expect.stringContaining("destructive_not_enabled") },
    });
    expect(body.error.message).toContain('permissions.enable: ["destructive"]');
    expect(body.error.message).toContain("Tools this agent may use: read_file, write_file.");
    expect(JSON.parse(read!.content as string)).toMatchObject({ ok: true, data: { content: "old" } });

    const failed = events.find((event) => event.kind === "tool.failed")!;
    expect(failed.payload).toMatchObject({
      toolCallId: "d",
      toolId: "delete_file",
      code: "tool.permission_denied",
      rule: "destructive_not_enabled",
    });
    // A refused call never started.
    const started = events
      .filter((event) => event.kind === "tool.started")
      .map((event) => event.payload.toolId);
    expect(started).toEqual(["read_file"]);
    expect(result.usage.toolCalls).toBe(1);
    await runtime.close();
  });

  it("a config deny refuses by pattern; a sandbox refusal names its rule too", async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { id: "w", name: "write_file", arguments: { path: "x.txt", content: "x" } },
          { id: "r", name: "read_file", arguments: { path: "../outside.txt" } },
        ],
      },
      { text: "done" },
    ]);
    const runtime = await agentRuntime(model, { permissions: { deny: ["write_*"] } });
    const events = recordEvents(runtime);
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    const [denied, outside] = toolMessages(model.requests[1]!.messages);
    expect(JSON.parse(denied!.content as string).error).toMatchObject({
      code: "tool.permission_denied",
      message: expect.stringContaining("config.deny:write_*"),
    });
    expect(JSON.parse(outside!.content as string).error.code).toBe("sandbox.path_outside");
    const failed = events.filter((event) => event.kind === "tool.failed").map((event) => event.payload.rule);
    expect(failed).toEqual(["config.deny:write_*", "path_outside_sandbox"]);
    expect(existsSync(path.join(ws, "x.txt"))).toBe(false);
    await runtime.close();
  });
});

describe("destructive operations need enablement and an approval", () => {
  const calls = () =>
    scriptedModel([
      { toolCalls: [{ id: "d", name: "delete_file", arguments: { path: "old.txt" } }] },
      { text: "finished" },
    ]);

  it("enabled: suspends for approval, and runs only once approved", async () => {
    const runtime = await agentRuntime(calls(), { permissions: { enable: ["destructive"] } });
    const waiting = await runtime.runDetailed({ agentId: "a", inputText: "clean up" });
    expect(waiting.stopReason).toBe("suspended");
    expect(waiting.pendingToolCalls).toMatchObject([{ toolCallId: "d", toolId: "delete_file" }]);
    expect(existsSync(path.join(ws, "old.txt"))).toBe(true);
    const done = await runtime.decide({
      runId: waiting.runId,
      decisions: [{ toolCallId: "d", action: "approve" }],
    });
    expect(done.stopReason).toBe("completed");
    expect(existsSync(path.join(ws, "old.txt"))).toBe(false);
    await runtime.close();
  });

  it("enabled: a denied decision leaves the file", async () => {
    const model = calls();
    const runtime = await agentRuntime(model, { permissions: { enable: ["destructive"] } });
    const waiting = await runtime.runDetailed({ agentId: "a", inputText: "clean up" });
    const done = await runtime.decide({
      runId: waiting.runId,
      decisions: [{ toolCallId: "d", action: "deny" }],
    });
    expect(done.stopReason).toBe("completed");
    expect(existsSync(path.join(ws, "old.txt"))).toBe(true);
    await runtime.close();
  });

  it("the approval comes from the policy, not from the tool: a custom destructive tool asks too", async () => {
    const { defineTool } = await import("../src/index.js");
    const { z } = await import("zod");
    let ran = 0;
    const wipe = defineTool({
      name: "wipe",
      description: "wipe",
      inputSchema: z.object({}),
      sideEffects: "destructive",
      execute: () => {
        ran++;
        return "wiped";
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: "w", name: "wipe", arguments: {} }] }, { text: "ok" }]);
    const off = await Runtime.fromDict({ agents: [{ id: "a", name: "A", llm: model, tools: [wipe] }] });
    expect((await off.runDetailed({ agentId: "a", inputText: "x" })).stopReason).toBe("completed");
    expect(ran).toBe(0);
    await off.close();

    const model2 = scriptedModel([{ toolCalls: [{ id: "w", name: "wipe", arguments: {} }] }, { text: "ok" }]);
    const on = await Runtime.fromDict({
      agents: [{ id: "a", name: "A", llm: model2, tools: [wipe], permissions: { enable: ["destructive"] } }],
    });
    const waiting = await on.runDetailed({ agentId: "a", inputText: "x" });
    expect(waiting.stopReason).toBe("suspended");
    expect(ran).toBe(0);
    await on.decide({ runId: waiting.runId, decisions: [{ toolCallId: "w", action: "approve" }] });
    expect(ran).toBe(1);
    await on.close();
  });
});

describe("inspecting the policy", () => {
  it("getEffectivePolicy lists rules with sources and a decision per tool, as plain JSON", async () => {
    const runtime = await agentRuntime(scriptedModel([{ text: "hi" }]), {
      permissions: { enable: ["network"], deny: ["write_file"] },
    });
    const policy = await runtime.getEffectivePolicy("a");
    expect(JSON.parse(JSON.stringify(policy))).toEqual(policy);
    expect(policy.agentId).toBe("a");
    expect(policy.enabled).toEqual(["network"]);
    expect(policy.rules.map((rule) => `${rule.source}:${rule.rule}:${rule.effect}`)).toEqual([
      "runtime:destructive_not_enabled:deny",
      "runtime:shell_not_enabled:deny",
      "config:config.enable:network:allow",
      "sandbox:sandbox.paths:deny",
      "config:config.deny:write_file:deny",
      // delete_file declares approvalMode "always"; the rule is listed, though the tool is refused before it.
      "tool:tool.approval_mode:delete_file:ask",
    ]);
    expect(
      Object.fromEntries(Object.entries(policy.tools).map(([id, verdict]) => [id, verdict.rule])),
    ).toEqual({
      read_file: "runtime.safe_default",
      write_file: "config.deny:write_file",
      delete_file: "destructive_not_enabled",
    });
    // A copy: changing it changes nothing in the runtime.
    policy.tools.delete_file!.effect = "allow";
    expect((await runtime.getEffectivePolicy("a")).tools.delete_file!.effect).toBe("deny");
    await expect(runtime.getEffectivePolicy("nope")).rejects.toThrow(/Unknown agent id/);
    await runtime.close();
  });

  it("emits permissions.computed once per run, with the rules", async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: "r", name: "read_file", arguments: { path: "old.txt" } }] },
      { text: "one" },
      { text: "two" },
    ]);
    const runtime = await agentRuntime(model);
    const events = recordEvents(runtime);
    await runtime.run({ agentId: "a", sessionId: "s", inputText: "1" });
    await runtime.run({ agentId: "a", sessionId: "s", inputText: "2" });
    const computed = events.filter((event) => event.kind === "permissions.computed");
    expect(computed).toHaveLength(2);
    expect(computed[0]!.payload).toMatchObject({
      agentId: "a",
      rules: expect.arrayContaining([
        expect.objectContaining({ rule: "destructive_not_enabled", source: "runtime" }),
      ]),
      tools: { delete_file: { effect: "deny" } },
    });
    const order = events.map((event) => event.kind);
    expect(order.indexOf("permissions.computed")).toBe(order.indexOf("run.started") + 1);
    await runtime.close();
  });
});

describe("skills in the policy", () => {
  const skillsDir = path.join(base, "skills");
  mkdirSync(path.join(skillsDir, "reader"), { recursive: true });
  writeFileSync(
    path.join(skillsDir, "reader", "SKILL.md"),
    "---\nname: reader\ndescription: reads\nallowed-tools: read_file\npermissions: [shell]\n---\nRead only.\n",
  );

  it("a loaded skill narrows the tools and its request grants nothing", async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { id: "w", name: "write_file", arguments: { path: "x.txt", content: "x" } },
          { id: "r", name: "read_file", arguments: { path: "old.txt" } },
        ],
      },
      { text: "done" },
    ]);
    const runtime = await agentRuntime(
      model,
      {},
      { skills: { type: "local", config: { search_paths: [skillsDir] } } },
    );
    // Before the skill loads, write_file is allowed.
    expect((await runtime.getEffectivePolicy("a", { sessionId: "s" })).tools.write_file!.effect).toBe(
      "allow",
    );
    await runtime.sessionManager.setState("s", { [LOADED_SKILLS_STATE_KEY]: ["reader"] });
    const policy = await runtime.getEffectivePolicy("a", { sessionId: "s" });
    expect(policy.skills).toEqual(["reader"]);
    expect(policy.tools.write_file).toMatchObject({
      effect: "deny",
      rule: "skill.allowed_tools",
      source: "skill",
    });
    expect(policy.rules.find((rule) => rule.rule === "skill.request:reader:shell")).toMatchObject({
      effect: "request",
      granted: false,
    });

    const events = recordEvents(runtime);
    const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    const [write, read] = toolMessages(model.requests[1]!.messages);
    expect(JSON.parse(write!.content as string).error.message).toContain("skill.allowed_tools");
    expect(JSON.parse(read!.content as string).ok).toBe(true);
    expect(events.find((event) => event.kind === "permissions.computed")!.payload.skills).toEqual(["reader"]);
    await runtime.close();
  });

  it("a skill loaded during a run narrows the calls after it in the same run, and the policy is logged again", async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "before.txt", content: "x" } }] },
      { toolCalls: [{ id: "k", name: "load_skill", arguments: { name: "reader" } }] },
      {
        toolCalls: [
          { id: "w2", name: "write_file", arguments: { path: "after.txt", content: "x" } },
          { id: "r", name: "read_file", arguments: { path: "old.txt" } },
        ],
      },
      { text: "done" },
    ]);
    const runtime = await agentRuntime(
      model,
      {
        tools: [
          { id: "fs", type: "filesystem", config: { tools: ["read_file", "write_file"] } },
          { id: "sk", type: "skills" },
        ],
      },
      { skills: { type: "local", config: { search_paths: [skillsDir] } } },
    );
    const events = recordEvents(runtime);
    const result = await runtime.runDetailed({ agentId: "a", sessionId: "mid", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    expect(existsSync(path.join(ws, "before.txt"))).toBe(true);
    expect(existsSync(path.join(ws, "after.txt"))).toBe(false);
    const [write, read] = toolMessages(model.requests[3]!.messages).slice(-2);
    expect(JSON.parse(write!.content as string).error.message).toContain("skill.allowed_tools");
    expect(JSON.parse(read!.content as string).ok).toBe(true);

    const computed = events.filter((event) => event.kind === "permissions.computed");
    expect(computed.map((event) => [event.payload.reason, event.payload.skills])).toEqual([
      ["run_started", []],
      ["skill_loaded", ["reader"]],
    ]);
    expect(computed[1]!.payload.tools).toMatchObject({
      write_file: { effect: "deny", rule: "skill.allowed_tools" },
    });
    // It was logged after load_skill finished and before the next model call.
    const kinds = events.map((event) => `${event.kind}:${String(event.payload.toolCallId ?? "")}`);
    expect(kinds.indexOf("permissions.computed:")).toBeLessThan(kinds.indexOf("tool.completed:k"));
    expect(kinds.lastIndexOf("permissions.computed:")).toBeGreaterThan(kinds.indexOf("tool.completed:k"));
    // The next run starts from the session's loaded skills.
    expect((await runtime.getEffectivePolicy("a", { sessionId: "mid" })).skills).toEqual(["reader"]);
    await runtime.close();
  });
});
