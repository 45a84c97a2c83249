import type { z } from "zod";
import type { PermissionsConfig, SandboxConfig } from "../config/app-config-schema.js";
import { getLogger } from "../logging/logger.js";

/** The seams a config can reference. */
export const PLUGIN_KINDS = [
  "tool",
  "memory",
  "pattern",
  "runtime",
  "session",
  "event_bus",
  "tool_executor",
  "context_assembler",
  "skills",
  "hook",
  "middleware",
  "run_queue",
] as const;

export type PluginKind = (typeof PLUGIN_KINDS)[number];

/** What a plugin factory may use while it builds its instance. */
export interface PluginFactoryContext {
  /** Directory relative `impl` specifiers and paths in plugin config resolve against. */
  baseDir: string;
  /** Load a nested plugin ref (for combinators: `chain`, `retry`, `file_logging`, …). */
  load: <T = unknown>(kind: PluginKind, ref: unknown) => Promise<T>;
  /** The runtime loading the plugin, for plugins that run agents (the `agent` tool). */
  runtime?: unknown;
  /** The agent a tool is loaded for: its id and the parts of its config tools obey. */
  agent?: PluginAgentContext;
  /** The config entry's `id` (a `tools` entry's), for plugins that name things after it (the `mcp` toolset). */
  id?: string;
}

/** What a tool plugin learns of its agent's config. */
export interface PluginAgentContext {
  readonly id: string;
  readonly sandbox?: SandboxConfig | undefined;
  readonly permissions?: PermissionsConfig | undefined;
  /** The agent's memory plugin, loaded before its tools (the memory toolset recalls and writes through it). */
  readonly memory?: unknown;
}

/** A plugin a config can name by `type`. */
export interface PluginDefinition<T = unknown> {
  readonly kind: PluginKind;
  readonly type: string;
  /** Validates `config`: unknown keys warn, invalid values are a `PluginConfigError`. */
  readonly configSchema?: z.ZodType;
  /** The npm package an optional builtin needs; its absence fails construction with an install hint. */
  readonly requiresPackage?: string;
  create(config: Record<string, unknown>, context: PluginFactoryContext): T | Promise<T>;
}

const builtins = new Map<PluginKind, Map<string, PluginDefinition>>();
const userEntries = new Map<PluginKind, Map<string, PluginDefinition>>();

function table(
  map: Map<PluginKind, Map<string, PluginDefinition>>,
  kind: PluginKind,
): Map<string, PluginDefinition> {
  let entries = map.get(kind);
  if (!entries) {
    entries = new Map();
    map.set(kind, entries);
  }
  return entries;
}

/** Register one of Keel's own plugins. */
export function registerBuiltin(definition: PluginDefinition): void {
  table(builtins, definition.kind).set(definition.type, definition);
}

/** Register a user plugin under a type name. A builtin of the same name wins, with a warning. */
export function registerUserPlugin(definition: PluginDefinition): void {
  if (table(builtins, definition.kind).has(definition.type)) {
    getLogger().warn(
      `${definition.kind} "${definition.type}" is a builtin name; the builtin wins over the user registration`,
    );
  }
  table(userEntries, definition.kind).set(definition.type, definition);
}

/** The definition a `type` names: the builtin first, then a user entry. */
export function getPlugin(kind: PluginKind, type: string): PluginDefinition | undefined {
  return table(builtins, kind).get(type) ?? table(userEntries, kind).get(type);
}

/** User-registered type names of a kind. */
export function listPlugins(kind: PluginKind): string[] {
  return [...table(userEntries, kind).keys()];
}

/** Builtin type names of a kind. */
export function listBuiltins(kind: PluginKind): string[] {
  return [...table(builtins, kind).keys()];
}

/** Remove a user registration (tests, hot reload). */
export function unregisterPlugin(kind: PluginKind, type: string): boolean {
  return table(userEntries, kind).delete(type);
}
