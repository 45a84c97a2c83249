import type { ContextAssembler } from "../context/context-assembler.js";
import type { Hook } from "../contracts/hook.js";
import type { AnyMiddleware } from "../contracts/middleware.js";
import type { EventBus } from "../contracts/runtime-event.js";
import type { Tool, ToolExecutor } from "../contracts/tool.js";
import type { RuntimePlugin } from "../loop/runtime-plugin.js";
import type { Memory } from "../memory/memory.js";
import type { Pattern } from "../patterns/pattern.js";
import {
  getPlugin as getDefinition,
  listPlugins as listUserPlugins,
  type PluginDefinition,
  type PluginFactoryContext,
  registerUserPlugin,
  unregisterPlugin as removeUserPlugin,
} from "../plugins/plugin-registry.js";
import type { SessionManager } from "../sessions/session-manager.js";
import type { SkillsManager } from "../skills/skills-manager.js";

/** What each kind of plugin makes: the instance a registered factory returns. */
export interface PluginTypes {
  tool: Tool;
  memory: Memory;
  /** A pattern factory returns a function making one pattern per run. */
  pattern: () => Pattern;
  runtime: RuntimePlugin;
  session: SessionManager;
  event_bus: EventBus;
  tool_executor: ToolExecutor;
  context_assembler: ContextAssembler;
  skills: SkillsManager;
  hook: Hook;
  /** Middleware for `"middleware": {"agent" | "chat" | "function": [{"type": …}]}`: a `(ctx, next)` function or `{process}`. */
  middleware: AnyMiddleware;
}

/** A kind of plugin a config can name by `type`. */
export type PluginKindName = keyof PluginTypes;

/** What `registerPlugin` accepts: a factory `(config, context) => instance`, or a full definition. */
export type PluginFactory<T> =
  | ((config: Record<string, unknown>, context: PluginFactoryContext) => T | Promise<T>)
  | Omit<PluginDefinition<T>, "kind" | "type">;

/**
 * Register a plugin under a type name, so configs can name it: `registerPlugin("tool", "weather", (config) =>
 * new WeatherTool(config))` makes `{"id": "w", "type": "weather", "config": {…}}` load it. A builtin of the same
 * name wins, with a warning.
 */
export function registerPlugin<K extends PluginKindName>(
  kind: K,
  type: string,
  factory: PluginFactory<PluginTypes[K]>,
): void {
  const definition = typeof factory === "function" ? { create: factory } : factory;
  registerUserPlugin({ ...definition, kind, type } as PluginDefinition);
}

/** The definition a `type` names: Keel's builtin first, then a registered one. */
export function getPlugin<K extends PluginKindName>(
  kind: K,
  type: string,
): PluginDefinition<PluginTypes[K]> | undefined {
  return getDefinition(kind, type) as PluginDefinition<PluginTypes[K]> | undefined;
}

/** The type names registered for a kind (builtins not included). */
export function listPlugins(kind: PluginKindName): string[] {
  return listUserPlugins(kind);
}

/** Remove a registration (tests, hot reload); a builtin cannot be removed. */
export function unregisterPlugin(kind: PluginKindName, type: string): boolean {
  return removeUserPlugin(kind, type);
}
