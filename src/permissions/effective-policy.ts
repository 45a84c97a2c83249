import type { SandboxConfig } from "../config/app-config-schema.js";
import type { ToolExecutionSpec } from "../contracts/tool.js";

/** What a tool may reach beyond the workspace: each is off until the agent's config `enable`s it. */
export type Capability = "destructive" | "shell" | "network";
export const CAPABILITIES: readonly Capability[] = Object.freeze(["destructive", "shell", "network"]);

/** Where a rule of the effective policy comes from; `tool` is a tool's own declaration (`approvalMode`). */
export type RuleSource = "runtime" | "config" | "skill" | "sandbox" | "tool";

/**
 * What a rule does: `deny` refuses, `allow` admits, `ask` admits after an approval decision, `narrow` limits the
 * tools to a list, `request` is a skill asking for a capability (granted only when the config enables it).
 */
export type RuleEffect = "allow" | "deny" | "ask" | "narrow" | "request";

/** The five merge rules that order the sources of a policy, by number. */
export type MergeRule = 1 | 2 | 3 | 4 | 5;

export const MERGE_RULES: Readonly<Record<MergeRule, string>> = Object.freeze({
  1: "Runtime deny rules always win",
  2: "Sandbox path constraints always win",
  3: "Config may enable safe capabilities",
  4: "Skill permissions only request capabilities; they never grant them alone",
  5: "Destructive operations need explicit config enablement, then an approval",
});

/** One rule of the effective policy, with where it came from and which merge rule places it. */
export interface PolicyRule {
  /** Stable name: what a refusal names, e.g. `shell_not_enabled`, `config.deny:delete_*`. */
  rule: string;
  effect: RuleEffect;
  source: RuleSource;
  mergeRule: MergeRule;
  description: string;
  capability?: Capability;
  /** Tool-id patterns the rule is about (exact ids, `*` and `?` globs). */
  tools?: string[];
  skill?: string;
  /** A skill's request: whether the config grants it. */
  granted?: boolean;
}

/** What the policy decided for one tool, and the rule that decided it. */
export interface ToolVerdict {
  effect: "allow" | "ask" | "deny";
  rule: string;
  source: RuleSource;
  mergeRule: MergeRule;
  capabilities: Capability[];
  /** For `deny` and `ask`: the sentence the model and the logs see. */
  message?: string;
}

/** The effective permission policy of an agent: plain data, JSON-serialisable. */
export interface EffectivePolicy {
  agentId: string;
  /** Capabilities the config enables. */
  enabled: Capability[];
  /** Loaded skills whose declarations took part. */
  skills: string[];
  sandbox: { roots: { path: string; mode: "ro" | "rw" }[] | "run-workspace" };
  rules: PolicyRule[];
  /** The decision for each of the agent's tools, by tool id. */
  tools: Record<string, ToolVerdict>;
  mergeRules: Readonly<Record<MergeRule, string>>;
}

/** What a tool declares about itself, as the policy reads it. */
export interface ToolDeclaration {
  capabilities: Capability[];
  writesFiles: boolean;
  /** The tool declares `approvalMode: "always"`: every call it makes waits for an approval decision. */
  asksApproval?: boolean;
}

/** What a loaded skill declares: `allowed-tools` (narrows) and `permissions` (requests). */
export interface SkillPermissionDeclaration {
  name: string;
  allowedTools: readonly string[];
  requests: readonly Capability[];
}

export interface PolicyInput {
  agentId: string;
  /** The agent's config `permissions`. */
  permissions?: {
    allow?: string[] | undefined;
    deny?: string[] | undefined;
    enable?: Capability[] | undefined;
  };
  tools: Readonly<Record<string, ToolDeclaration>>;
  skills?: readonly SkillPermissionDeclaration[];
  sandbox?: SandboxConfig | undefined;
  /** Deny patterns the embedding runtime imposes; nothing in config or skills lifts them (merge rule 1). */
  runtimeDeny?: readonly string[];
}

/** A tool's capabilities by declaration: its `executionSpec().sideEffects`. */
export function declarationOf(spec: ToolExecutionSpec): ToolDeclaration {
  const capabilities: Capability[] = [];
  if (spec.sideEffects === "destructive") capabilities.push("destructive");
  if (spec.sideEffects === "shell") capabilities.push("shell");
  if (spec.sideEffects === "network") capabilities.push("network");
  return {
    capabilities,
    writesFiles: spec.writesFiles,
    ...(spec.approvalMode === "always" ? { asksApproval: true } : {}),
  };
}

/** Whether a tool id matches a pattern: the exact id, or a glob with `*` (any run) and `?` (one character). */
export function matchesToolPattern(pattern: string, toolId: string): boolean {
  if (!pattern.includes("*") && !pattern.includes("?")) return pattern === toolId;
  let source = "^";
  for (const char of pattern) {
    if (char === "*") source += ".*";
    else if (char === "?") source += ".";
    else source += char.replace(/[\\^$.|+()[\]{}]/g, "\\$&");
  }
  return new RegExp(`${source}$`, "s").test(toolId);
}

function firstMatch(patterns: readonly string[] | undefined, toolId: string): string | undefined {
  return patterns?.find((pattern) => matchesToolPattern(pattern, toolId));
}

/** The rule a tool's own `approvalMode: "always"` shows as, followed by `:<tool id>`. */
const TOOL_APPROVAL_RULE = "tool.approval_mode";

const NOT_ENABLED: Record<Capability, { rule: string; mergeRule: MergeRule; what: string }> = {
  destructive: {
    rule: "destructive_not_enabled",
    mergeRule: 5,
    what: "Destructive tools (deleting, overwriting outside the workspace)",
  },
  shell: { rule: "shell_not_enabled", mergeRule: 1, what: "Shell tools" },
  network: { rule: "network_not_enabled", mergeRule: 1, what: "Network tools" },
};

/**
 * Compute the effective permission policy from runtime safe defaults, the config's `permissions`, the
 * loaded skills' declarations and the sandbox, with the five merge rules. Pure: the same input gives the
 * same policy, and nothing is read from disk.
 *
 * Each tool is decided in this order; the first rule that refuses decides:
 * 1. runtime deny patterns (merge rule 1);
 * 2. a capability the config does not `enable` (runtime safe default; merge rules 1 and 5) — config `allow`
 *    patterns cannot lift it, only `enable` can;
 * 3. sandbox constraints: a tool that writes files when every configured root is read-only (merge rule 2);
 * 4. config `deny` patterns, then the config `allow` list when there is one (merge rule 3; deny beats allow);
 * 5. loaded skills' `allowed-tools`: a tool none of them lists is refused (merge rule 4 — skills narrow);
 * then a destructive tool that passed asks for approval (merge rule 5), a tool that declares
 * `approvalMode: "always"` asks for it too (source `tool`), and anything else is allowed.
 */
export function computeEffectivePolicy(input: PolicyInput): EffectivePolicy {
  const permissions = input.permissions ?? {};
  const enabled = CAPABILITIES.filter((capability) => permissions.enable?.includes(capability));
  const skills = input.skills ?? [];
  const roots = input.sandbox?.roots;
  const rules: PolicyRule[] = [];

  for (const pattern of input.runtimeDeny ?? []) {
    rules.push({
      rule: `runtime.deny:${pattern}`,
      effect: "deny",
      source: "runtime",
      mergeRule: 1,
      tools: [pattern],
      description: `The runtime refuses tools matching '${pattern}'; nothing in config or skills lifts it`,
    });
  }
  for (const capability of CAPABILITIES) {
    const { rule, mergeRule, what } = NOT_ENABLED[capability];
    if (enabled.includes(capability)) {
      rules.push({
        rule: `config.enable:${capability}`,
        effect: capability === "destructive" ? "ask" : "allow",
        source: "config",
        mergeRule: capability === "destructive" ? 5 : 3,
        capability,
        description:
          capability === "destructive"
            ? "permissions.enable lists 'destructive': destructive tools may run, each call after an approval"
            : `permissions.enable lists '${capability}': ${what.toLowerCase()} may run`,
      });
    } else {
      rules.push({
        rule,
        effect: "deny",
        source: "runtime",
        mergeRule,
        capability,
        description: `${what} are off by default; permissions.enable: ["${capability}"] turns them on`,
      });
    }
  }
  if (enabled.includes("destructive")) {
    rules.push({
      rule: "destructive_requires_approval",
      effect: "ask",
      source: "runtime",
      mergeRule: 5,
      capability: "destructive",
      description: "Every call of a destructive tool suspends for an approval decision",
    });
  }
  rules.push({
    rule: "sandbox.paths",
    effect: "deny",
    source: "sandbox",
    mergeRule: 2,
    description:
      roots === undefined || roots.length === 0
        ? "File paths must stay inside the run's workspace (runs/<run-id>/workspace); nothing lifts this"
        : `File paths must stay inside the sandbox roots (${roots.map((root) => `${root.path} ${root.mode}`).join(", ")}); nothing lifts this`,
  });
  const readOnly = roots !== undefined && roots.length > 0 && roots.every((root) => root.mode === "ro");
  if (readOnly) {
    rules.push({
      rule: "path_read_only",
      effect: "deny",
      source: "sandbox",
      mergeRule: 2,
      description: "Every sandbox root is read-only: tools that write files are refused",
    });
  }
  for (const pattern of permissions.deny ?? []) {
    rules.push({
      rule: `config.deny:${pattern}`,
      effect: "deny",
      source: "config",
      mergeRule: 3,
      tools: [pattern],
      description: `permissions.deny refuses tools matching '${pattern}' (deny beats allow)`,
    });
  }
  for (const pattern of permissions.allow ?? []) {
    rules.push({
      rule: `config.allow:${pattern}`,
      effect: "allow",
      source: "config",
      mergeRule: 3,
      tools: [pattern],
      description: `permissions.allow admits tools matching '${pattern}' (it cannot turn on a capability)`,
    });
  }
  for (const [toolId, declaration] of Object.entries(input.tools)) {
    if (declaration.asksApproval !== true) continue;
    // Not one of the merged sources: the tool adds an approval on top of what the merge rules admit, and
    // it is admitted as a safe capability (merge rule 3) unless a rule above refuses it.
    rules.push({
      rule: `${TOOL_APPROVAL_RULE}:${toolId}`,
      effect: "ask",
      source: "tool",
      mergeRule: 3,
      tools: [toolId],
      description: `Tool '${toolId}' declares approvalMode "always": each call waits for an approval decision`,
    });
  }
  const narrowing = skills.filter((skill) => skill.allowedTools.length > 0);
  for (const skill of narrowing) {
    rules.push({
      rule: `skill.allowed_tools:${skill.name}`,
      effect: "narrow",
      source: "skill",
      mergeRule: 4,
      skill: skill.name,
      tools: [...skill.allowedTools],
      description: `Skill '${skill.name}' uses only ${skill.allowedTools.join(", ")}; tools no loaded skill lists are refused`,
    });
  }
  for (const skill of skills) {
    for (const capability of skill.requests) {
      const granted = enabled.includes(capability);
      rules.push({
        rule: `skill.request:${skill.name}:${capability}`,
        effect: "request",
        source: "skill",
        mergeRule: 4,
        skill: skill.name,
        capability,
        granted,
        description: granted
          ? `Skill '${skill.name}' requests '${capability}'; granted because permissions.enable lists it`
          : `Skill '${skill.name}' requests '${capability}'; not granted: a skill cannot grant a capability, only permissions.enable can`,
      });
    }
  }

  const toolIds = Object.keys(input.tools);
  const tools: Record<string, ToolVerdict> = {};
  const verdicts: [string, ToolVerdict][] = toolIds.map((toolId) => [
    toolId,
    decide(toolId, input.tools[toolId]!, { input, enabled, readOnly, narrowing }),
  ]);
  const admitted = verdicts.filter(([, verdict]) => verdict.effect !== "deny").map(([toolId]) => toolId);
  const allowedList = admitted.length > 0 ? admitted.join(", ") : "none";
  for (const [toolId, verdict] of verdicts) {
    if (verdict.effect === "deny")
      verdict.message = `${verdict.message} Tools this agent may use: ${allowedList}.`;
    tools[toolId] = verdict;
  }
  return {
    agentId: input.agentId,
    enabled,
    skills: skills.map((skill) => skill.name),
    sandbox: {
      roots:
        roots === undefined || roots.length === 0
          ? "run-workspace"
          : roots.map((root) => ({ path: root.path, mode: root.mode })),
    },
    rules,
    tools,
    mergeRules: MERGE_RULES,
  };
}

/** The rule that refuses a tool, where it comes from and the merge rule that made it win. */
type RefusingRule = Pick<ToolVerdict, "rule" | "source" | "mergeRule">;

function decide(
  toolId: string,
  declaration: ToolDeclaration,
  context: {
    input: PolicyInput;
    enabled: readonly Capability[];
    readOnly: boolean;
    narrowing: readonly SkillPermissionDeclaration[];
  },
): ToolVerdict {
  const { input, enabled, readOnly, narrowing } = context;
  const capabilities = [...declaration.capabilities];
  const deny = ({ rule, source, mergeRule }: RefusingRule, why: string): ToolVerdict => ({
    effect: "deny",
    rule,
    source,
    mergeRule,
    capabilities,
    message: `Tool '${toolId}' is refused by rule ${rule} (${source}, merge rule ${mergeRule}): ${why}.`,
  });
  const runtimeDeny = firstMatch(input.runtimeDeny, toolId);
  if (runtimeDeny !== undefined)
    return deny(
      { rule: `runtime.deny:${runtimeDeny}`, source: "runtime", mergeRule: 1 },
      `the runtime refuses tools matching '${runtimeDeny}'`,
    );
  for (const capability of capabilities) {
    if (enabled.includes(capability)) continue;
    const { rule, mergeRule, what } = NOT_ENABLED[capability];
    return deny(
      { rule, source: "runtime", mergeRule },
      `${what.toLowerCase()} are off unless the agent's config sets permissions.enable: ["${capability}"]`,
    );
  }
  if (readOnly && declaration.writesFiles)
    return deny(
      { rule: "path_read_only", source: "sandbox", mergeRule: 2 },
      "it writes files and every sandbox root is read-only",
    );
  const permissions = input.permissions ?? {};
  const denied = firstMatch(permissions.deny, toolId);
  if (denied !== undefined)
    return deny(
      { rule: `config.deny:${denied}`, source: "config", mergeRule: 3 },
      `permissions.deny matches it ('${denied}')`,
    );
  const allowed = firstMatch(permissions.allow, toolId);
  if (permissions.allow !== undefined && permissions.allow.length > 0 && allowed === undefined)
    return deny(
      { rule: "tool_disabled", source: "config", mergeRule: 3 },
      "permissions.allow does not list it",
    );
  if (narrowing.length > 0) {
    const listed = narrowing.some((skill) => firstMatch(skill.allowedTools, toolId) !== undefined);
    if (!listed) {
      const names = narrowing.map((skill) => `'${skill.name}'`).join(", ");
      return deny(
        { rule: "skill.allowed_tools", source: "skill", mergeRule: 4 },
        `the loaded skills (${names}) do not list it in allowed-tools`,
      );
    }
  }
  if (capabilities.includes("destructive"))
    return {
      effect: "ask",
      rule: "destructive_requires_approval",
      source: "runtime",
      mergeRule: 5,
      capabilities,
      message: `Tool '${toolId}' is destructive: each call needs an approval (rule destructive_requires_approval, merge rule 5)`,
    };
  if (declaration.asksApproval === true)
    return {
      effect: "ask",
      rule: `${TOOL_APPROVAL_RULE}:${toolId}`,
      source: "tool",
      mergeRule: 3,
      capabilities,
      message: `Tool '${toolId}' requires approval: it declares approvalMode "always"`,
    };
  if (allowed !== undefined)
    return { effect: "allow", rule: `config.allow:${allowed}`, source: "config", mergeRule: 3, capabilities };
  const capability = capabilities[0];
  if (capability !== undefined)
    return {
      effect: "allow",
      rule: `config.enable:${capability}`,
      source: "config",
      mergeRule: 3,
      capabilities,
    };
  return { effect: "allow", rule: "runtime.safe_default", source: "runtime", mergeRule: 3, capabilities };
}
