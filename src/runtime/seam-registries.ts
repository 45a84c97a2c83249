import type { ContextAssembler } from "../context/context-assembler.js";
import type { Hook } from "../contracts/hook.js";
import type { AnyMiddleware } from "../contracts/middleware.js";
import type { EventBus } from "../contracts/runtime-event.js";
import type { Tool, ToolExecutor } from "../contracts/tool.js";
import type { RuntimePlugin } from "../loop/runtime-plugin.js";
import type { Memory } from "../memory/memory.js";
import type { Pattern } from "../patterns/pattern.js";
import {
  getPlugin,
  listPlugins,
  type PluginDefinition,
  type PluginFactoryContext,
  type PluginKind,
  registerPlugin,
} from "../plugins/plugin-registry.js";
import type { SessionManager } from "../sessions/session-manager.js";
import type { SkillsManager } from "../skills/skills-manager.js";

/** What `registerX` accepts: a factory `(config, context) => instance`, or a full definition. */
export type PluginFactory<T> =
  | ((config: Record<string, unknown>, context: PluginFactoryContext) => T | Promise<T>)
  | Omit<PluginDefinition<T>, "kind" | "type">;

function registrar<T>(kind: PluginKind) {
  return {
    register(type: string, factory: PluginFactory<T>): void {
      const definition = typeof factory === "function" ? { create: factory } : factory;
      registerPlugin({ ...definition, kind, type } as PluginDefinition);
    },
    get(type: string): PluginDefinition<T> | undefined {
      return getPlugin(kind, type) as PluginDefinition<T> | undefined;
    },
    list(): string[] {
      return listPlugins(kind);
    },
  };
}

const tool = registrar<Tool>("tool");
const memory = registrar<Memory>("memory");
const pattern = registrar<() => Pattern>("pattern");
const runtime = registrar<RuntimePlugin>("runtime");
const session = registrar<SessionManager>("session");
const eventBus = registrar<EventBus>("event_bus");
const toolExecutor = registrar<ToolExecutor>("tool_executor");
const contextAssembler = registrar<ContextAssembler>("context_assembler");
const skills = registrar<SkillsManager>("skills");
const hook = registrar<Hook>("hook");
const middleware = registrar<AnyMiddleware>("middleware");

/** Register a tool type for configs (`{"id": "x", "type": "<name>"}`). */
export const registerTool = tool.register;
export const getTool = tool.get;
export const listTools = tool.list;
export const registerMemory = memory.register;
export const getMemory = memory.get;
export const listMemories = memory.list;
/** A pattern factory returns a function making one pattern per run. */
export const registerPattern = pattern.register;
export const getPattern = pattern.get;
export const listPatterns = pattern.list;
export const registerRuntime = runtime.register;
export const getRuntime = runtime.get;
export const listRuntimes = runtime.list;
export const registerSession = session.register;
export const getSession = session.get;
export const listSessions = session.list;
export const registerEventBus = eventBus.register;
export const getEventBus = eventBus.get;
export const listEventBuses = eventBus.list;
export const registerToolExecutor = toolExecutor.register;
export const getToolExecutor = toolExecutor.get;
export const listToolExecutors = toolExecutor.list;
export const registerContextAssembler = contextAssembler.register;
export const getContextAssembler = contextAssembler.get;
export const listContextAssemblers = contextAssembler.list;
export const registerSkills = skills.register;
export const getSkills = skills.get;
export const listSkills = skills.list;
export const registerHook = hook.register;
export const getHook = hook.get;
export const listHooks = hook.list;
/**
 * Register middleware for configs (`"middleware": {"chat": [{"type": "<name>", "config": {…}}]}`): the factory
 * gets the ref's `config` and returns the middleware, a `(ctx, next)` function or an object with `process`.
 */
export const registerMiddleware = middleware.register;
export const getMiddleware = middleware.get;
export const listMiddleware = middleware.list;
