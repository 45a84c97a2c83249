import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { PluginConfigError, PluginLoadError, ToolAuthError } from "../errors/error-classes.js";
import type { KeelError } from "../errors/keel-error.js";
import { type Logger, setLogger } from "../logging/logger.js";
import { isPluginRef, loadPlugin } from "./load-plugin.js";
import {
  type PluginFactoryContext,
  registerBuiltin,
  registerUserPlugin,
  unregisterPlugin,
} from "./plugin-registry.js";

let dir: string;
let warnings: string[];
let previousLogger: Logger;

async function failure(promise: Promise<unknown>): Promise<KeelError> {
  try {
    await promise;
  } catch (error) {
    return error as KeelError;
  }
  throw new Error("expected the load to fail");
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "keel-load-plugin-"));
  await writeFile(
    path.join(dir, "plugins.mjs"),
    [
      "export class Greeter {",
      "  constructor(config) { this.config = config; }",
      "  greet() { return 'hello ' + this.config.name; }",
      "}",
      "export function createCounter(config, context) {",
      "  return { config, baseDir: context.baseDir, loadType: typeof context.load, count() { return 1; } };",
      "}",
      "export async function createAsync(config) { return { asyncConfig: config }; }",
      "export const instance = { ready: true, inject() {} };",
      "export class Configured {",
      "  static configSchema = { safeParse: (value) =>",
      "    typeof value.level === 'number' ? { success: true, data: { level: value.level, checked: true } }",
      "    : { success: false, error: { issues: [{ path: ['level'], message: 'expected a number' }] } } };",
      "  constructor(config) { this.config = config; }",
      "}",
    ].join("\n"),
  );
  await writeFile(path.join(dir, "broken.mjs"), 'throw new Error("module exploded");\n');
  await writeFile(
    path.join(dir, "needs-dep.mjs"),
    'import "keel-missing-dependency-xyz";\nexport const tool = { invoke() {} };\n',
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

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

const memorySchema = z.object({ size: z.number().int().positive().default(5), label: z.string().optional() });

registerBuiltin({
  kind: "memory",
  type: "test_memory",
  configSchema: memorySchema,
  create: (config, context) => ({ kind: "test_memory", config, context, inject() {}, writeback() {} }),
});
registerBuiltin({
  kind: "memory",
  type: "test_wrapper",
  create: async (config, context) => ({ wrapped: await context.load("memory", config.inner) }),
});
registerBuiltin({
  kind: "memory",
  type: "test_crashing",
  create: () => {
    throw new Error("no connection");
  },
});
registerBuiltin({
  kind: "memory",
  type: "test_keel_failing",
  create: () => {
    throw new ToolAuthError("bad key", { hint: "set KEY" });
  },
});

describe("loadPlugin", () => {
  describe("builtin and registered types", () => {
    it("creates a builtin with its parsed config and a factory context", async () => {
      const memory = await loadPlugin<{ config: unknown; context: PluginFactoryContext }>(
        "memory",
        { type: "test_memory", config: { size: 3 } },
        { baseDir: dir },
      );
      expect(memory.config).toEqual({ size: 3 });
      expect(memory.context.baseDir).toBe(dir);
      expect(typeof memory.context.load).toBe("function");
    });

    it("applies the schema's defaults when config is absent", async () => {
      const memory = await loadPlugin<{ config: unknown }>("memory", { type: "test_memory" });
      expect(memory.config).toEqual({ size: 5 });
    });

    it("defaults baseDir to the working directory", async () => {
      const memory = await loadPlugin<{ context: PluginFactoryContext }>("memory", { type: "test_memory" });
      expect(memory.context.baseDir).toBe(process.cwd());
    });

    it("creates a user-registered type", async () => {
      registerUserPlugin({ kind: "hook", type: "test_user_hook", create: (config) => ({ user: config }) });
      try {
        expect(await loadPlugin("hook", { type: "test_user_hook", config: { a: 1 } })).toEqual({
          user: { a: 1 },
        });
      } finally {
        unregisterPlugin("hook", "test_user_hook");
      }
    });

    it("refuses an unknown type with a PluginLoadError and a Did you mean hint", async () => {
      const error = await failure(
        loadPlugin("memory", { type: "test_memroy" }, { label: "agents[0].memory" }),
      );
      expect(error).toBeInstanceOf(PluginLoadError);
      expect(error.code).toBe("plugin.load");
      expect(error.message).toBe('agents[0].memory: unknown memory type "test_memroy"');
      expect(error.hint).toBe(
        'Did you mean "test_memory"? Available: test_memory, test_wrapper, test_crashing, test_keel_failing',
      );
    });

    it("lists what is available without a suggestion when nothing is close", async () => {
      const error = await failure(loadPlugin("memory", { type: "zzz" }));
      expect(error.message).toBe('memory: unknown memory type "zzz"');
      expect(error.hint).toBe("Available: test_memory, test_wrapper, test_crashing, test_keel_failing");
      const none = await failure(loadPlugin("skills", { type: "local_ish" }));
      expect(none.hint).toBe("Available: none");
    });

    it("wraps a plain error from create in a PluginLoadError and keeps Keel errors", async () => {
      const crashed = await failure(loadPlugin("memory", { type: "test_crashing" }));
      expect(crashed).toBeInstanceOf(PluginLoadError);
      expect(crashed.message).toBe('memory: memory "test_crashing" failed to start: no connection');
      expect(crashed.hint).toBe("Check the plugin's config");
      expect((crashed.cause as Error).message).toBe("no connection");
      const keel = await failure(loadPlugin("memory", { type: "test_keel_failing" }));
      expect(keel).toBeInstanceOf(ToolAuthError);
      expect(keel.hint).toBe("set KEY");
    });

    it("refuses a ref with neither a type nor an impl", async () => {
      const error = await failure(loadPlugin("memory", { type: "", config: {} }));
      expect(error).toBeInstanceOf(PluginLoadError);
      expect(error.message).toBe('memory: a plugin ref needs "type" or "impl"');
      expect(error.hint).toBe(
        'Name a builtin ({"type": "test_memory"}) or a module ({"impl": "./my-plugin.js#MyPlugin"})',
      );
    });
  });

  describe("plugin config validation", () => {
    it("warns about unknown keys and drops them", async () => {
      const memory = await loadPlugin<{ config: unknown }>("memory", {
        type: "test_memory",
        config: { size: 2, sise: 4 },
      });
      expect(memory.config).toEqual({ size: 2 });
      expect(warnings).toEqual([
        'memory "test_memory": unknown config key "sise" is ignored (known keys: size, label)',
      ]);
    });

    it("refuses an invalid value with a PluginConfigError naming the key", async () => {
      const error = await failure(loadPlugin("memory", { type: "test_memory", config: { size: "big" } }));
      expect(error).toBeInstanceOf(PluginConfigError);
      expect(error.code).toBe("plugin.config");
      expect(error.message).toBe(
        'memory "test_memory": invalid config at size: Invalid input: expected number, received string',
      );
      expect(error.hint).toBe(
        'Fix "size" in the plugin\'s config; every issue: size: Invalid input: expected number, received string',
      );
      expect(warnings).toEqual([]);
    });

    it("lists every issue in the hint", async () => {
      const error = await failure(
        loadPlugin("memory", { type: "test_memory", config: { size: -1, label: 3 } }),
      );
      expect(error.message).toBe(
        'memory "test_memory": invalid config at size: Too small: expected number to be >0',
      );
      expect(error.hint).toBe(
        'Fix "size" in the plugin\'s config; every issue: size: Too small: expected number to be >0; label: Invalid input: expected string, received number',
      );
    });

    it("validates an impl export's static configSchema", async () => {
      const impl = `./plugins.mjs#Configured`;
      const loaded = await loadPlugin<{ config: unknown }>(
        "hook",
        { impl, config: { level: 2 } },
        { baseDir: dir },
      );
      expect(loaded.config).toEqual({ level: 2, checked: true });
    });
  });

  describe("impl modules", () => {
    it("constructs an exported class with the config", async () => {
      const greeter = await loadPlugin<{ greet(): string }>(
        "hook",
        { impl: "./plugins.mjs#Greeter", config: { name: "Ada" } },
        { baseDir: dir, requiredMethods: ["greet"] },
      );
      expect(greeter.constructor.name).toBe("Greeter");
      expect(greeter.greet()).toBe("hello Ada");
    });

    it("calls an exported function with the config and the context", async () => {
      const counter = await loadPlugin<Record<string, unknown>>(
        "hook",
        { impl: "./plugins.mjs#createCounter", config: { start: 1 } },
        { baseDir: dir },
      );
      expect(counter.config).toEqual({ start: 1 });
      expect(counter.baseDir).toBe(dir);
      expect(counter.loadType).toBe("function");
    });

    it("awaits an async factory and passes {} when there is no config", async () => {
      expect(await loadPlugin("hook", { impl: "./plugins.mjs#createAsync" }, { baseDir: dir })).toEqual({
        asyncConfig: {},
      });
    });

    it("uses an exported object as it is", async () => {
      const url = pathToFileURL(path.join(dir, "plugins.mjs")).href;
      const module = (await import(url)) as { instance: unknown };
      const loaded = await loadPlugin("memory", { impl: "./plugins.mjs#instance" }, { baseDir: dir });
      expect(loaded).toBe(module.instance);
    });

    it("resolves an absolute specifier", async () => {
      const impl = `${path.join(dir, "plugins.mjs")}#instance`;
      expect(await loadPlugin("memory", { impl })).toEqual({ ready: true, inject: expect.any(Function) });
    });

    it("names the exports and the nearest one when the export is missing", async () => {
      const error = await failure(loadPlugin("hook", { impl: "./plugins.mjs#Greter" }, { baseDir: dir }));
      expect(error).toBeInstanceOf(PluginLoadError);
      expect(error.message).toBe('hook: "./plugins.mjs" has no export "Greter"');
      // The order of the exports is the module loader's (sorted in Node, declaration order under vitest).
      const exportsOf = (hint: string | undefined, prefix: string) => {
        expect(hint?.startsWith(prefix)).toBe(true);
        return hint!.slice(prefix.length).split(", ").sort();
      };
      const all = ["Configured", "Greeter", "createAsync", "createCounter", "instance"];
      expect(exportsOf(error.hint, 'Did you mean "Greeter"? Its exports: ')).toEqual(all);
      const far = await failure(loadPlugin("hook", { impl: "./plugins.mjs#zzz" }, { baseDir: dir }));
      expect(exportsOf(far.hint, "Its exports: ")).toEqual(all);
    });

    it("gives the resolved path when a relative module is missing", async () => {
      const error = await failure(
        loadPlugin(
          "tool",
          { impl: "./missing/tool.mjs#tool" },
          { baseDir: dir, label: "agents[0].tools[0]" },
        ),
      );
      expect(error).toBeInstanceOf(PluginLoadError);
      expect(error.message.startsWith('agents[0].tools[0]: cannot import "./missing/tool.mjs": ')).toBe(true);
      expect(error.hint).toBe(
        `No module at ${path.join(dir, "missing", "tool.mjs")}; paths resolve against the config file's directory`,
      );
      expect(error.cause).toBeInstanceOf(Error);
    });

    it("suggests installing a missing package", async () => {
      const error = await failure(loadPlugin("tool", { impl: "keel-no-such-package-xyz/sub/path#tool" }));
      expect(error.hint).toBe("Install it: npm install keel-no-such-package-xyz");
      const scoped = await failure(loadPlugin("tool", { impl: "@keel-no-such-scope/pkg/deep#tool" }));
      expect(scoped.hint).toBe("Install it: npm install @keel-no-such-scope/pkg");
    });

    // BUG (src/plugins/load-plugin.ts, createFromModule, hint at lines ~132-135): only specifiers starting with
    // "." get the path hint; an absolute path that does not exist gets "Install it: npm install " with an empty
    // package name (packageName("/nonexistent/...") is "").
    it("gives the path hint for a missing absolute module", async () => {
      const missing = path.join(dir, "absent.mjs");
      const error = await failure(loadPlugin("tool", { impl: `${missing}#tool` }));
      expect(error.hint).toBe(`No module at ${missing}; paths resolve against the config file's directory`);
    });

    // BUG (src/plugins/load-plugin.ts, createFromModule, lines ~129-135): ERR_MODULE_NOT_FOUND is also the code
    // when the plugin module exists but one of ITS imports is missing; the hint then claims "No module at
    // <the existing plugin path>" instead of naming the missing package.
    it("names the missing dependency when the plugin module exists but its import is missing", async () => {
      const error = await failure(loadPlugin("tool", { impl: "./needs-dep.mjs#tool" }, { baseDir: dir }));
      expect(error).toBeInstanceOf(PluginLoadError);
      expect(error.message).toContain("keel-missing-dependency-xyz");
      expect(error.hint).toBe(
        'The plugin imports "keel-missing-dependency-xyz", which is not installed. Install it: npm install keel-missing-dependency-xyz',
      );
    });

    it("says when the module itself failed while loading", async () => {
      const error = await failure(loadPlugin("tool", { impl: "./broken.mjs#tool" }, { baseDir: dir }));
      expect(error).toBeInstanceOf(PluginLoadError);
      expect(error.message).toBe('tool: cannot import "./broken.mjs": module exploded');
      expect(error.hint).toBe("The module failed while loading; run it directly to see the error");
    });

    it("refuses an impl that is not <module>#<export>", async () => {
      for (const impl of ["./plugins.mjs", "#Greeter", "./plugins.mjs#"]) {
        const error = await failure(loadPlugin("hook", { impl }, { baseDir: dir }));
        expect(error).toBeInstanceOf(PluginLoadError);
        expect(error.message).toBe(`hook: impl "${impl}" must be "<module specifier>#<export>"`);
        expect(error.hint).toBe(
          'For example "./plugins/my-memory.js#MyMemory" or "some-package#createPlugin"',
        );
      }
    });
  });

  describe("requiredMethods", () => {
    it("refuses a plugin missing required methods, naming them", async () => {
      const error = await failure(
        loadPlugin("memory", { type: "test_memory" }, { requiredMethods: ["inject", "retrieve", "close"] }),
      );
      expect(error).toBeInstanceOf(PluginLoadError);
      expect(error.message).toBe("memory: the memory plugin is missing method(s) retrieve, close");
      expect(error.hint).toBe("A memory plugin must implement inject, retrieve, close");
    });

    it("accepts a plugin that has them", async () => {
      await expect(
        loadPlugin("memory", { type: "test_memory" }, { requiredMethods: ["inject", "writeback"] }),
      ).resolves.toBeDefined();
    });

    it("checks ready instances too, including null", async () => {
      const error = await failure(loadPlugin("memory", { inject: 1 }, { requiredMethods: ["inject"] }));
      expect(error.message).toBe("memory: the memory plugin is missing method(s) inject");
      const nothing = await failure(loadPlugin("memory", null, { requiredMethods: ["inject"] }));
      expect(nothing).toBeInstanceOf(PluginLoadError);
    });
  });

  describe("ready instances", () => {
    it("pass through unchanged", async () => {
      class Memory {
        type = "not a ref, a class instance";
        inject() {}
      }
      const instance = new Memory();
      expect(await loadPlugin("memory", instance, { requiredMethods: ["inject"] })).toBe(instance);
      const plain = { inject() {} };
      expect(await loadPlugin("memory", plain)).toBe(plain);
      const fn = () => "hook";
      expect(await loadPlugin("hook", fn)).toBe(fn);
    });

    it("isPluginRef tells refs from instances", () => {
      expect(isPluginRef({ type: "buffer" })).toBe(true);
      expect(isPluginRef({ impl: "./x.js#X", config: {} })).toBe(true);
      expect(isPluginRef(Object.assign(Object.create(null), { type: "x" }))).toBe(true);
      expect(isPluginRef({ config: {} })).toBe(false);
      expect(
        isPluginRef(
          new (class {
            type = "x";
          })(),
        ),
      ).toBe(false);
      expect(isPluginRef([{ type: "x" }])).toBe(false);
      expect(isPluginRef(null)).toBe(false);
      expect(isPluginRef("buffer")).toBe(false);
    });
  });

  describe("nested loads", () => {
    it("loads a nested ref through context.load", async () => {
      const wrapper = await loadPlugin<{ wrapped: { config: unknown; context: PluginFactoryContext } }>(
        "memory",
        { type: "test_wrapper", config: { inner: { type: "test_memory", config: { size: 9 } } } },
        { baseDir: dir },
      );
      expect(wrapper.wrapped.config).toEqual({ size: 9 });
      expect(wrapper.wrapped.context.baseDir).toBe(dir);
    });

    it("loads a nested impl relative to the same baseDir", async () => {
      const wrapper = await loadPlugin<{ wrapped: unknown }>(
        "memory",
        { type: "test_wrapper", config: { inner: { impl: "./plugins.mjs#instance" } } },
        { baseDir: dir },
      );
      expect(wrapper.wrapped).toEqual({ ready: true, inject: expect.any(Function) });
    });

    it("labels a nested failure under the parent's config", async () => {
      const error = await failure(
        loadPlugin(
          "memory",
          { type: "test_wrapper", config: { inner: { type: "test_memroy" } } },
          { label: "agents[0].memory" },
        ),
      );
      expect(error).toBeInstanceOf(PluginLoadError);
      expect(error.message).toBe('agents[0].memory.config: unknown memory type "test_memroy"');
    });
  });
});
