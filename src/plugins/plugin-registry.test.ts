import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Logger, setLogger } from "../logging/logger.js";
import {
  getPlugin,
  listBuiltins,
  listPlugins,
  PLUGIN_KINDS,
  type PluginDefinition,
  registerBuiltin,
  registerUserPlugin,
  unregisterPlugin,
} from "./plugin-registry.js";

let warnings: string[];
let previousLogger: Logger;

beforeEach(() => {
  warnings = [];
  previousLogger = setLogger({
    debug: () => {},
    info: () => {},
    warn: (message) => warnings.push(message),
    error: () => {},
  });
});

afterEach(() => {
  setLogger(previousLogger);
});

function definition(kind: PluginDefinition["kind"], type: string, tag: string): PluginDefinition {
  return { kind, type, create: () => tag };
}

describe("plugin registry", () => {
  it("knows the seams configs can reference", () => {
    expect(PLUGIN_KINDS).toEqual([
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
    ]);
  });

  it("registers and finds builtins and user plugins per kind", () => {
    const builtin = definition("session", "reg_builtin", "builtin");
    const user = definition("session", "reg_user", "user");
    registerBuiltin(builtin);
    registerUserPlugin(user);
    expect(getPlugin("session", "reg_builtin")).toBe(builtin);
    expect(getPlugin("session", "reg_user")).toBe(user);
    expect(getPlugin("memory", "reg_user")).toBeUndefined();
    expect(getPlugin("session", "nothing")).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it("lists builtins and user entries separately, in registration order", () => {
    registerBuiltin(definition("skills", "b_two", "x"));
    registerBuiltin(definition("skills", "b_one", "x"));
    registerUserPlugin(definition("skills", "u_two", "x"));
    registerUserPlugin(definition("skills", "u_one", "x"));
    expect(listBuiltins("skills")).toEqual(["b_two", "b_one"]);
    expect(listPlugins("skills")).toEqual(["u_two", "u_one"]);
    expect(listBuiltins("middleware")).toEqual([]);
    expect(listPlugins("middleware")).toEqual([]);
  });

  it("lets a builtin win over a user entry of the same name, with a warning", () => {
    const builtin = definition("event_bus", "clash", "builtin");
    const user = definition("event_bus", "clash", "user");
    registerBuiltin(builtin);
    registerUserPlugin(user);
    expect(warnings).toEqual([
      'event_bus "clash" is a builtin name; the builtin wins over the user registration',
    ]);
    expect(getPlugin("event_bus", "clash")).toBe(builtin);
    expect(listPlugins("event_bus")).toEqual(["clash"]);
  });

  it("keeps the builtin when a builtin is registered after a user entry", () => {
    const user = definition("pattern", "late_builtin", "user");
    const builtin = definition("pattern", "late_builtin", "builtin");
    registerUserPlugin(user);
    registerBuiltin(builtin);
    expect(getPlugin("pattern", "late_builtin")).toBe(builtin);
    expect(warnings).toEqual([]);
  });

  it("replaces a user entry registered again under the same name", () => {
    registerUserPlugin(definition("runtime", "again", "first"));
    const second = definition("runtime", "again", "second");
    registerUserPlugin(second);
    expect(getPlugin("runtime", "again")).toBe(second);
    expect(listPlugins("runtime")).toEqual(["again"]);
  });

  it("unregisters user entries only", () => {
    const builtin = definition("context_assembler", "ua_builtin", "b");
    registerBuiltin(builtin);
    registerUserPlugin(definition("context_assembler", "ua_user", "u"));
    expect(unregisterPlugin("context_assembler", "ua_user")).toBe(true);
    expect(getPlugin("context_assembler", "ua_user")).toBeUndefined();
    expect(listPlugins("context_assembler")).toEqual([]);
    expect(unregisterPlugin("context_assembler", "ua_user")).toBe(false);
    expect(unregisterPlugin("context_assembler", "ua_builtin")).toBe(false);
    expect(getPlugin("context_assembler", "ua_builtin")).toBe(builtin);
  });

  it("uncovers the builtin when the clashing user entry is unregistered", () => {
    const builtin = definition("tool_executor", "shadowed", "b");
    registerBuiltin(builtin);
    registerUserPlugin(definition("tool_executor", "shadowed", "u"));
    expect(unregisterPlugin("tool_executor", "shadowed")).toBe(true);
    expect(getPlugin("tool_executor", "shadowed")).toBe(builtin);
    expect(listPlugins("tool_executor")).toEqual([]);
  });
});
