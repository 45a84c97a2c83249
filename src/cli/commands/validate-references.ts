import { registerBuiltins } from "../../builtins/register-builtins.js";
import type { AppConfig } from "../../config/app-config-schema.js";
import { formatConfigPath } from "../../config/config-issues.js";
import type { ConfigIssue } from "../../errors/error-classes.js";
import { KeelError } from "../../errors/keel-error.js";
import { createModel } from "../../models/create-model.js";
import { checkPluginRef, isPluginRef } from "../../plugins/load-plugin.js";
import type { PluginKind } from "../../plugins/plugin-registry.js";

export interface CheckReferencesOptions {
  /** Where relative `impl` specifiers resolve: the config file's directory. */
  baseDir: string;
  /** Where API keys are read; `process.env` when absent. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * What `keel run` would refuse while loading a config that the schema accepts: each plugin ref's `type` against
 * its registry, each `impl` module and export, each plugin's own config schema, optional packages, and each
 * agent's model with its API key. Nothing is constructed beyond the model object (which opens no connection):
 * no server is spawned, no store is opened. Returns every issue, with the hints a load would give.
 */
export async function checkConfigReferences(
  config: AppConfig,
  options: CheckReferencesOptions,
): Promise<ConfigIssue[]> {
  registerBuiltins();
  const refs: [kind: PluginKind, path: PropertyKey[], ref: unknown][] = [
    ["runtime", ["runtime"], config.runtime],
    ["session", ["session"], config.session],
    ["event_bus", ["events"], config.events],
    ["skills", ["skills"], config.skills],
  ];
  config.agents.forEach((agent, index) => {
    const at = (...path: PropertyKey[]): PropertyKey[] => ["agents", index, ...path];
    refs.push(["memory", at("memory"), agent.memory], ["pattern", at("pattern"), agent.pattern]);
    if (agent.tool_executor !== undefined)
      refs.push(["tool_executor", at("tool_executor"), agent.tool_executor]);
    if (agent.context_assembler !== undefined)
      refs.push(["context_assembler", at("context_assembler"), agent.context_assembler]);
    for (const [position, tool] of agent.tools.entries()) {
      // A disabled tool is never loaded, so nothing in it can fail a run.
      if ((tool as { enabled?: boolean }).enabled !== false) refs.push(["tool", at("tools", position), tool]);
    }
    for (const [position, hook] of agent.hooks.entries()) refs.push(["hook", at("hooks", position), hook]);
    for (const level of ["agent", "chat", "function"] as const) {
      for (const [position, entry] of (agent.middleware[level] ?? []).entries())
        refs.push(["middleware", at("middleware", level, position), entry]);
    }
  });
  const issues: ConfigIssue[] = [];
  for (let index = 0; index < refs.length; index++) {
    const [kind, path, ref] = refs[index]!;
    const label = formatConfigPath(path);
    try {
      await checkPluginRef(kind, ref, { baseDir: options.baseDir, label });
    } catch (error) {
      issues.push(issueOf(label, error));
      continue;
    }
    refs.push(...nestedRefs(kind, path, ref));
  }
  config.agents.forEach((agent, index) => {
    try {
      createModel(agent.llm, options.env === undefined ? {} : { env: options.env });
    } catch (error) {
      issues.push(issueOf(formatConfigPath(["agents", index, "llm"]), error));
    }
  });
  return issues;
}

/** Builtins that load plugins of their own from a config key: the `retry` executor's `inner`, and so on. */
const NESTED: Readonly<Partial<Record<PluginKind, Readonly<Record<string, PluginKind>>>>> = {
  tool_executor: { inner: "tool_executor" },
  event_bus: { inner: "event_bus" },
  memory: { memories: "memory" },
};

function nestedRefs(
  kind: PluginKind,
  path: readonly PropertyKey[],
  ref: unknown,
): [PluginKind, PropertyKey[], unknown][] {
  const keys = NESTED[kind];
  const config = (ref as { type?: unknown; config?: Record<string, unknown> } | null)?.config;
  if (keys === undefined || typeof (ref as { type?: unknown } | null)?.type !== "string" || config == null)
    return [];
  const found: [PluginKind, PropertyKey[], unknown][] = [];
  for (const [key, nestedKind] of Object.entries(keys)) {
    const value = config[key];
    if (Array.isArray(value)) {
      for (const [position, entry] of value.entries())
        if (isPluginRef(entry)) found.push([nestedKind, [...path, "config", key, position], entry]);
    } else if (isPluginRef(value)) {
      found.push([nestedKind, [...path, "config", key], value]);
    }
  }
  return found;
}

/** The error as an issue at `path`; its message loses the `path: ` a load puts in front. */
function issueOf(path: string, error: unknown): ConfigIssue {
  const message = (error as Error)?.message ?? String(error);
  const issue: ConfigIssue = {
    path,
    message: message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message,
  };
  if (KeelError.isInstance(error) && error.hint !== undefined) issue.hint = error.hint;
  return issue;
}
