import type { EffectivePolicy } from "../../permissions/effective-policy.js";
import { Runtime } from "../../runtime/runtime.js";
import type { OutputStream } from "./validate.js";

export interface PolicyCommandOptions {
  configPath: string;
  /** Default: the config's first agent. */
  agentId?: string;
  /** Take the skills this session has loaded into account. */
  sessionId?: string;
  json: boolean;
  stdout: OutputStream;
}

/**
 * `keel policy <config>`: an agent's effective permission policy — each rule with its source and the
 * merge rule that places it, then each tool's decision and the rule that made it. `--json` prints the value
 * `runtime.getEffectivePolicy` returns, on one line. Exit 0.
 */
export async function policyCommand(options: PolicyCommandOptions): Promise<number> {
  const runtime = await Runtime.fromConfig(options.configPath);
  try {
    const agentId = options.agentId ?? runtime.listAgents()[0]?.id ?? "";
    const policy = await runtime.getEffectivePolicy(
      agentId,
      options.sessionId === undefined ? {} : { sessionId: options.sessionId },
    );
    options.stdout.write(options.json ? `${JSON.stringify(policy)}\n` : describePolicy(policy));
    return 0;
  } finally {
    await runtime.close();
  }
}

/** The readable form: rules in the order they were merged, then the tools. */
export function describePolicy(policy: EffectivePolicy): string {
  const lines: string[] = [`Effective permission policy of agent '${policy.agentId}'`];
  lines.push(`  enabled capabilities: ${policy.enabled.length > 0 ? policy.enabled.join(", ") : "none"}`);
  lines.push(
    `  sandbox: ${
      policy.sandbox.roots === "run-workspace"
        ? "the run's workspace (runs/<run-id>/workspace)"
        : policy.sandbox.roots.map((root) => `${root.path} (${root.mode})`).join(", ")
    }`,
  );
  if (policy.skills.length > 0) lines.push(`  loaded skills: ${policy.skills.join(", ")}`);
  lines.push("", "Rules (source, merge rule):");
  const ruleWidth = Math.max(...policy.rules.map((rule) => rule.rule.length));
  for (const rule of policy.rules) {
    lines.push(
      `  ${rule.effect.padEnd(7)} ${rule.rule.padEnd(ruleWidth)}  ${rule.source.padEnd(7)} #${rule.mergeRule}  ${rule.description}`,
    );
  }
  lines.push("", "Tools:");
  const tools = Object.entries(policy.tools);
  if (tools.length === 0) lines.push("  (none)");
  const toolWidth = Math.max(0, ...tools.map(([toolId]) => toolId.length));
  for (const [toolId, verdict] of tools) {
    const capabilities = verdict.capabilities.length > 0 ? `  [${verdict.capabilities.join(", ")}]` : "";
    lines.push(`  ${toolId.padEnd(toolWidth)}  ${verdict.effect.padEnd(5)}  ${verdict.rule}${capabilities}`);
  }
  lines.push("", "Merge rules:");
  for (const [number, text] of Object.entries(policy.mergeRules)) lines.push(`  ${number}. ${text}`);
  return `${lines.join("\n")}\n`;
}
