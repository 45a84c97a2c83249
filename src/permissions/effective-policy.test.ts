import { describe, expect, it } from "vitest";
import { DEFAULT_EXECUTION_SPEC } from "../contracts/tool.js";
import {
  computeEffectivePolicy,
  declarationOf,
  matchesToolPattern,
  type PolicyInput,
  type ToolDeclaration,
} from "./effective-policy.js";

const safe: ToolDeclaration = { capabilities: [], writesFiles: false };
const writes: ToolDeclaration = { capabilities: [], writesFiles: true };
const TOOLS: Record<string, ToolDeclaration> = {
  read_file: safe,
  write_file: writes,
  delete_file: { capabilities: ["destructive"], writesFiles: true },
  shell_exec: { capabilities: ["shell"], writesFiles: false },
  http_request: { capabilities: ["network"], writesFiles: false },
};

type Row = {
  name: string;
  mergeRule: 1 | 2 | 3 | 4 | 5;
  input: Partial<PolicyInput>;
  tool: string;
  effect: "allow" | "ask" | "deny";
  rule: string;
  source: "runtime" | "config" | "skill" | "sandbox" | "tool";
};

/** Merge rules 1–5: one row per rule and per way it shows. */
const ROWS: Row[] = [
  // 1. Runtime deny rules always win.
  {
    name: "shell is off by default",
    mergeRule: 1,
    input: {},
    tool: "shell_exec",
    effect: "deny",
    rule: "shell_not_enabled",
    source: "runtime",
  },
  {
    name: "network is off by default",
    mergeRule: 1,
    input: {},
    tool: "http_request",
    effect: "deny",
    rule: "network_not_enabled",
    source: "runtime",
  },
  {
    name: "a config allow does not lift a runtime default",
    mergeRule: 1,
    input: { permissions: { allow: ["shell_exec"] } },
    tool: "shell_exec",
    effect: "deny",
    rule: "shell_not_enabled",
    source: "runtime",
  },
  {
    name: "a runtime deny beats config enable and allow",
    mergeRule: 1,
    input: { runtimeDeny: ["http_*"], permissions: { enable: ["network"], allow: ["http_request"] } },
    tool: "http_request",
    effect: "deny",
    rule: "runtime.deny:http_*",
    source: "runtime",
  },
  {
    name: "a runtime deny beats a skill that lists the tool",
    mergeRule: 1,
    input: { runtimeDeny: ["read_file"], skills: [{ name: "s", allowedTools: ["read_file"], requests: [] }] },
    tool: "read_file",
    effect: "deny",
    rule: "runtime.deny:read_file",
    source: "runtime",
  },
  // 2. Sandbox path constraints always win.
  {
    name: "read-only roots refuse a writing tool",
    mergeRule: 2,
    input: { sandbox: { roots: [{ path: "/data", mode: "ro" }] } },
    tool: "write_file",
    effect: "deny",
    rule: "path_read_only",
    source: "sandbox",
  },
  {
    name: "read-only roots beat a config allow",
    mergeRule: 2,
    input: { sandbox: { roots: [{ path: "/data", mode: "ro" }] }, permissions: { allow: ["write_file"] } },
    tool: "write_file",
    effect: "deny",
    rule: "path_read_only",
    source: "sandbox",
  },
  {
    name: "read-only roots still let a reader read",
    mergeRule: 2,
    input: { sandbox: { roots: [{ path: "/data", mode: "ro" }] } },
    tool: "read_file",
    effect: "allow",
    rule: "runtime.safe_default",
    source: "runtime",
  },
  {
    name: "one rw root lets a writer write",
    mergeRule: 2,
    input: {
      sandbox: {
        roots: [
          { path: "/data", mode: "ro" },
          { path: "/out", mode: "rw" },
        ],
      },
    },
    tool: "write_file",
    effect: "allow",
    rule: "runtime.safe_default",
    source: "runtime",
  },
  // 3. Config may enable safe capabilities (and restrict with deny / allow).
  {
    name: "a safe tool is allowed by default",
    mergeRule: 3,
    input: {},
    tool: "read_file",
    effect: "allow",
    rule: "runtime.safe_default",
    source: "runtime",
  },
  {
    name: "enable network turns network tools on",
    mergeRule: 3,
    input: { permissions: { enable: ["network"] } },
    tool: "http_request",
    effect: "allow",
    rule: "config.enable:network",
    source: "config",
  },
  {
    name: "enable shell turns shell tools on",
    mergeRule: 3,
    input: { permissions: { enable: ["shell"] } },
    tool: "shell_exec",
    effect: "allow",
    rule: "config.enable:shell",
    source: "config",
  },
  {
    name: "a config deny refuses",
    mergeRule: 3,
    input: { permissions: { deny: ["write_*"] } },
    tool: "write_file",
    effect: "deny",
    rule: "config.deny:write_*",
    source: "config",
  },
  {
    name: "deny beats allow",
    mergeRule: 3,
    input: { permissions: { allow: ["write_file"], deny: ["write_file"] } },
    tool: "write_file",
    effect: "deny",
    rule: "config.deny:write_file",
    source: "config",
  },
  {
    name: "an allow list refuses what it does not list",
    mergeRule: 3,
    input: { permissions: { allow: ["read_file"] } },
    tool: "write_file",
    effect: "deny",
    rule: "tool_disabled",
    source: "config",
  },
  {
    name: "an allow list admits what it lists",
    mergeRule: 3,
    input: { permissions: { allow: ["read_*"] } },
    tool: "read_file",
    effect: "allow",
    rule: "config.allow:read_*",
    source: "config",
  },
  {
    name: "a config deny beats enable",
    mergeRule: 3,
    input: { permissions: { enable: ["network"], deny: ["http_request"] } },
    tool: "http_request",
    effect: "deny",
    rule: "config.deny:http_request",
    source: "config",
  },
  // 4. Skills only request: they narrow, never grant.
  {
    name: "a loaded skill's allowed-tools narrows",
    mergeRule: 4,
    input: { skills: [{ name: "reader", allowedTools: ["read_file"], requests: [] }] },
    tool: "write_file",
    effect: "deny",
    rule: "skill.allowed_tools",
    source: "skill",
  },
  {
    name: "a tool a loaded skill lists stays allowed",
    mergeRule: 4,
    input: { skills: [{ name: "reader", allowedTools: ["read_file"], requests: [] }] },
    tool: "read_file",
    effect: "allow",
    rule: "runtime.safe_default",
    source: "runtime",
  },
  {
    name: "two skills narrow to the union of their lists",
    mergeRule: 4,
    input: {
      skills: [
        { name: "r", allowedTools: ["read_file"], requests: [] },
        { name: "w", allowedTools: ["write_file"], requests: [] },
      ],
    },
    tool: "write_file",
    effect: "allow",
    rule: "runtime.safe_default",
    source: "runtime",
  },
  {
    name: "a skill listing a shell tool does not grant shell",
    mergeRule: 4,
    input: { skills: [{ name: "ops", allowedTools: ["shell_exec"], requests: ["shell"] }] },
    tool: "shell_exec",
    effect: "deny",
    rule: "shell_not_enabled",
    source: "runtime",
  },
  {
    name: "a skill requesting network config did not grant stays refused",
    mergeRule: 4,
    input: { skills: [{ name: "web", allowedTools: [], requests: ["network"] }] },
    tool: "http_request",
    effect: "deny",
    rule: "network_not_enabled",
    source: "runtime",
  },
  {
    name: "a skill cannot list past a config deny",
    mergeRule: 4,
    input: {
      permissions: { deny: ["write_file"] },
      skills: [{ name: "w", allowedTools: ["write_file"], requests: [] }],
    },
    tool: "write_file",
    effect: "deny",
    rule: "config.deny:write_file",
    source: "config",
  },
  {
    name: "a skill's request within what config enables is granted",
    mergeRule: 4,
    input: {
      permissions: { enable: ["network"] },
      skills: [{ name: "web", allowedTools: ["http_request"], requests: ["network"] }],
    },
    tool: "http_request",
    effect: "allow",
    rule: "config.enable:network",
    source: "config",
  },
  // 5. Destructive operations need explicit config enablement, then an approval.
  {
    name: "destructive is off by default",
    mergeRule: 5,
    input: {},
    tool: "delete_file",
    effect: "deny",
    rule: "destructive_not_enabled",
    source: "runtime",
  },
  {
    name: "a config allow does not enable destructive",
    mergeRule: 5,
    input: { permissions: { allow: ["delete_file"] } },
    tool: "delete_file",
    effect: "deny",
    rule: "destructive_not_enabled",
    source: "runtime",
  },
  {
    name: "a skill cannot enable destructive",
    mergeRule: 5,
    input: { skills: [{ name: "cleanup", allowedTools: ["delete_file"], requests: ["destructive"] }] },
    tool: "delete_file",
    effect: "deny",
    rule: "destructive_not_enabled",
    source: "runtime",
  },
  {
    name: "enabled destructive still asks for approval",
    mergeRule: 5,
    input: { permissions: { enable: ["destructive"] } },
    tool: "delete_file",
    effect: "ask",
    rule: "destructive_requires_approval",
    source: "runtime",
  },
  {
    name: "enabled and allowed destructive still asks",
    mergeRule: 5,
    input: { permissions: { enable: ["destructive"], allow: ["delete_file"] } },
    tool: "delete_file",
    effect: "ask",
    rule: "destructive_requires_approval",
    source: "runtime",
  },
];

describe("the effective permission policy: the five merge rules", () => {
  it.each(ROWS)("rule $mergeRule: $name", (row) => {
    const policy = computeEffectivePolicy({ agentId: "a", tools: TOOLS, ...row.input });
    const verdict = policy.tools[row.tool]!;
    expect({ effect: verdict.effect, rule: verdict.rule, source: verdict.source }).toEqual({
      effect: row.effect,
      rule: row.rule,
      source: row.source,
    });
    if (row.effect !== "allow") {
      expect(verdict.message).toContain(row.rule);
      expect(verdict.message).toContain(row.tool);
    }
  });

  it("covers every merge rule in its table", () => {
    expect(new Set(ROWS.map((row) => row.mergeRule))).toEqual(new Set([1, 2, 3, 4, 5]));
  });

  it("lists every rule with its source, as plain JSON", () => {
    const policy = computeEffectivePolicy({
      agentId: "a",
      tools: TOOLS,
      permissions: { enable: ["network"], deny: ["write_*"], allow: ["read_file", "http_request"] },
      skills: [{ name: "web", allowedTools: ["http_request", "read_file"], requests: ["network", "shell"] }],
      sandbox: { roots: [{ path: "/srv/ws", mode: "rw" }] },
    });
    expect(JSON.parse(JSON.stringify(policy))).toEqual(policy);
    expect(policy.rules.map((rule) => [rule.rule, rule.effect, rule.source])).toEqual([
      ["destructive_not_enabled", "deny", "runtime"],
      ["shell_not_enabled", "deny", "runtime"],
      ["config.enable:network", "allow", "config"],
      ["sandbox.paths", "deny", "sandbox"],
      ["config.deny:write_*", "deny", "config"],
      ["config.allow:read_file", "allow", "config"],
      ["config.allow:http_request", "allow", "config"],
      ["skill.allowed_tools:web", "narrow", "skill"],
      ["skill.request:web:network", "request", "skill"],
      ["skill.request:web:shell", "request", "skill"],
    ]);
    const requests = policy.rules.filter((rule) => rule.effect === "request");
    expect(requests.map((rule) => [rule.capability, rule.granted])).toEqual([
      ["network", true],
      ["shell", false],
    ]);
    expect(policy.enabled).toEqual(["network"]);
    expect(policy.skills).toEqual(["web"]);
    expect(policy.sandbox).toEqual({ roots: [{ path: "/srv/ws", mode: "rw" }] });
    expect(policy.mergeRules[4]).toBe(
      "Skill permissions only request capabilities; they never grant them alone",
    );
    // A refusal tells the model what it may use instead.
    expect(policy.tools.write_file!.message).toContain("Tools this agent may use: read_file, http_request.");
  });

  it("reads capabilities from a tool's execution spec", () => {
    const spec = (sideEffects: typeof DEFAULT_EXECUTION_SPEC.sideEffects, writesFiles = false) => ({
      ...DEFAULT_EXECUTION_SPEC,
      sideEffects,
      writesFiles,
    });
    expect(declarationOf(spec("destructive", true))).toEqual({
      capabilities: ["destructive"],
      writesFiles: true,
    });
    expect(declarationOf(spec("shell")).capabilities).toEqual(["shell"]);
    expect(declarationOf(spec("network")).capabilities).toEqual(["network"]);
    for (const plain of ["none", "read", "write", "unknown"] as const)
      expect(declarationOf(spec(plain)).capabilities).toEqual([]);
  });

  it("asks for a tool that declares approvalMode always, naming the tool's declaration as the source", () => {
    const tools = { ...TOOLS, pay: { capabilities: [], writesFiles: false, asksApproval: true } };
    const policy = computeEffectivePolicy({ agentId: "a", tools });
    expect(policy.tools.pay).toMatchObject({
      effect: "ask",
      rule: "tool.approval_mode:pay",
      source: "tool",
      message: `Tool 'pay' requires approval: it declares approvalMode "always"`,
    });
    expect(policy.rules).toContainEqual(
      expect.objectContaining({
        rule: "tool.approval_mode:pay",
        effect: "ask",
        source: "tool",
        tools: ["pay"],
      }),
    );
    // Asking never lifts a refusal: a config deny still refuses the tool.
    const denied = computeEffectivePolicy({ agentId: "a", tools, permissions: { deny: ["pay"] } });
    expect(denied.tools.pay).toMatchObject({ effect: "deny", rule: "config.deny:pay" });
    // A destructive tool that also declares it keeps the destructive rule, which asks first.
    const destructive = computeEffectivePolicy({
      agentId: "a",
      tools: { delete_file: { capabilities: ["destructive"], writesFiles: true, asksApproval: true } },
      permissions: { enable: ["destructive"] },
    });
    expect(destructive.tools.delete_file!.rule).toBe("destructive_requires_approval");
    expect(declarationOf({ ...DEFAULT_EXECUTION_SPEC, approvalMode: "always" }).asksApproval).toBe(true);
    expect(
      declarationOf({ ...DEFAULT_EXECUTION_SPEC, approvalMode: "inherit" }).asksApproval,
    ).toBeUndefined();
  });

  it("matches tool ids exactly or by glob, never as a regex", () => {
    expect(matchesToolPattern("read_file", "read_file")).toBe(true);
    expect(matchesToolPattern("read_file", "read_files")).toBe(false);
    expect(matchesToolPattern("read_*", "read_file")).toBe(true);
    expect(matchesToolPattern("*_file", "delete_file")).toBe(true);
    expect(matchesToolPattern("mcp.?.x", "mcp.a.x")).toBe(true);
    expect(matchesToolPattern("a.c", "abc")).toBe(false);
    expect(matchesToolPattern("(a|b)", "a")).toBe(false);
  });
});
