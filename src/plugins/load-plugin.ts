import { stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { nearMatch } from "../config/near-match.js";
import { PluginLoadError } from "../errors/error-classes.js";
import { KeelError } from "../errors/keel-error.js";
import { parsePluginConfig } from "./plugin-config.js";
import {
  getPlugin,
  listBuiltins,
  listPlugins,
  type PluginAgentContext,
  type PluginDefinition,
  type PluginFactoryContext,
  type PluginKind,
} from "./plugin-registry.js";

export interface PluginRefLike {
  type?: string | null;
  impl?: string | null;
  config?: Record<string, unknown>;
}

export interface LoadPluginOptions {
  /** Methods the loaded value must have, for a clear error instead of a crash later. */
  requiredMethods?: readonly string[];
  /** Where relative `impl` specifiers resolve (the config file's directory). */
  baseDir?: string;
  /** A name for messages, such as `agents[0].memory`. */
  label?: string;
  /** The runtime loading it, handed to factories as `context.runtime`. */
  runtime?: unknown;
  /** The agent it is loaded for, handed to factories as `context.agent`. */
  agent?: PluginAgentContext;
  /** The config entry's `id`, handed to factories as `context.id`. */
  id?: string;
}

/** A config ref: a plain object naming a builtin `type` or an `impl`. Anything else is a ready instance. */
export function isPluginRef(value: unknown): value is PluginRefLike {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  return "type" in value || "impl" in value;
}

/**
 * Resolve a plugin ref: a builtin or registered `type`, or `impl: "<module>#<export>"` (a class is
 * constructed with the config, a function is called with it — except middleware, which is a function — an
 * object is used as is). Ready instances pass through. Failures are a `PluginLoadError` saying what to fix.
 */
export async function loadPlugin<T = unknown>(
  kind: PluginKind,
  ref: unknown,
  options: LoadPluginOptions = {},
): Promise<T> {
  const baseDir = options.baseDir ?? process.cwd();
  const label = options.label ?? kind;
  const context: PluginFactoryContext = {
    baseDir,
    load: (nestedKind, nestedRef) =>
      loadPlugin(nestedKind, nestedRef, {
        baseDir,
        label: `${label}.config`,
        runtime: options.runtime,
        ...(options.agent === undefined ? {} : { agent: options.agent }),
      }),
    runtime: options.runtime,
  };
  if (options.agent !== undefined) context.agent = options.agent;
  if (options.id !== undefined) context.id = options.id;
  let value: unknown;
  if (!isPluginRef(ref)) {
    value = ref;
  } else if (ref.type) {
    value = await createBuiltin({ kind, type: ref.type, config: ref.config ?? {}, label }, context);
  } else if (ref.impl) {
    value = await createFromModule({ kind, impl: ref.impl, config: ref.config ?? {}, label }, context);
  } else {
    throw new PluginLoadError(`${label}: a plugin ref needs "type" or "impl"`, {
      hint: `Name a builtin ({"type": "${listBuiltins(kind)[0] ?? "…"}"}) or a module ({"impl": "./my-plugin.js#MyPlugin"})`,
    });
  }
  const missing = (options.requiredMethods ?? []).filter(
    (method) => typeof (value as Record<string, unknown> | null)?.[method] !== "function",
  );
  if (missing.length > 0) {
    throw new PluginLoadError(`${label}: the ${kind} plugin is missing method(s) ${missing.join(", ")}`, {
      hint: `A ${kind} plugin must implement ${options.requiredMethods!.join(", ")}`,
    });
  }
  return value as T;
}

/**
 * Everything `loadPlugin` checks before it builds anything (`keel validate`): the `type` is registered, or the
 * `impl` module imports and has the export; the config passes the plugin's own schema; an optional package
 * the builtin needs is installed. Nothing is constructed, started or connected. Throws what `loadPlugin` would.
 */
export async function checkPluginRef(
  kind: PluginKind,
  ref: unknown,
  options: Pick<LoadPluginOptions, "baseDir" | "label"> = {},
): Promise<void> {
  if (!isPluginRef(ref)) return;
  const label = options.label ?? kind;
  if (ref.type) {
    const { definition } = resolveBuiltin({ kind, type: ref.type, config: ref.config ?? {}, label });
    const needed = definition.requiresPackage;
    if (needed !== undefined && !isResolvable(needed)) {
      throw new PluginLoadError(`${label}: ${kind} "${ref.type}" needs the package "${needed}"`, {
        hint: `Install it: npm install ${needed}`,
      });
    }
  } else if (ref.impl) {
    const moduleRef = { kind, impl: ref.impl, config: ref.config ?? {}, label };
    await importExport(moduleRef, options.baseDir ?? process.cwd());
  }
}

/** Whether a package resolves from Keel's own location, where the builtin imports it; nothing is loaded. */
function isResolvable(specifier: string): boolean {
  // Some module runners (test transforms) give no import.meta.resolve; require's resolution finds it there.
  const attempts: (() => unknown)[] = [];
  if (typeof import.meta.resolve === "function") attempts.push(() => import.meta.resolve(specifier));
  const require = createRequire(import.meta.url);
  attempts.push(() => require.resolve(specifier));
  attempts.push(() => require.resolve(`${specifier}/package.json`));
  for (const attempt of attempts) {
    try {
      attempt();
      return true;
    } catch {
      // try the next way
    }
  }
  return false;
}

/** A plugin ref as the loader works on it: its kind, its config and the name messages give it. */
interface ResolvingRef {
  kind: PluginKind;
  config: Record<string, unknown>;
  label: string;
}

/** A ref naming a builtin or registered `type`. */
interface BuiltinRef extends ResolvingRef {
  type: string;
}

/** A ref naming `impl: "<module specifier>#<export>"`. */
interface ModuleRef extends ResolvingRef {
  impl: string;
}

function resolveBuiltin({ kind, type, config, label }: BuiltinRef): {
  definition: PluginDefinition;
  parsed: unknown;
} {
  const definition = getPlugin(kind, type);
  if (!definition) {
    const known = [...listBuiltins(kind), ...listPlugins(kind)];
    const suggestion = nearMatch(type, known);
    throw new PluginLoadError(`${label}: unknown ${kind} type "${type}"`, {
      hint: `${suggestion ? `Did you mean "${suggestion}"? ` : ""}Available: ${known.join(", ") || "none"}`,
    });
  }
  const parsed = definition.configSchema
    ? parsePluginConfig(definition.configSchema, config, { kind, type })
    : config;
  return { definition, parsed };
}

async function createBuiltin(ref: BuiltinRef, context: PluginFactoryContext): Promise<unknown> {
  const { kind, type, label } = ref;
  const { definition, parsed } = resolveBuiltin(ref);
  try {
    return await definition.create(parsed as Record<string, unknown>, context);
  } catch (error) {
    if (KeelError.isInstance(error)) throw error;
    throw new PluginLoadError(`${label}: ${kind} "${type}" failed to start: ${(error as Error).message}`, {
      cause: error,
      hint: "Check the plugin's config",
    });
  }
}

async function createFromModule(ref: ModuleRef, context: PluginFactoryContext): Promise<unknown> {
  const { kind } = ref;
  const { exported, parsed } = await importExport(ref, context.baseDir);
  if (typeof exported === "function") {
    if (isClass(exported)) return new (exported as new (config: unknown) => unknown)(parsed);
    if (FUNCTIONS_ARE_PLUGINS.has(kind)) return exported;
    return await (exported as (config: unknown, context: PluginFactoryContext) => unknown)(parsed, context);
  }
  return exported;
}

/** The export an `impl` names, and its config as the export's own `configSchema` (if any) parses it. */
async function importExport(
  { kind, impl, config, label }: ModuleRef,
  baseDir: string,
): Promise<{ exported: unknown; parsed: unknown }> {
  const hash = impl.lastIndexOf("#");
  if (hash <= 0 || hash === impl.length - 1) {
    throw new PluginLoadError(`${label}: impl "${impl}" must be "<module specifier>#<export>"`, {
      hint: 'For example "./plugins/my-memory.js#MyMemory" or "some-package#createPlugin"',
    });
  }
  const specifier = impl.slice(0, hash);
  const exportName = impl.slice(hash + 1);
  const file =
    specifier.startsWith(".") || path.isAbsolute(specifier) ? path.resolve(baseDir, specifier) : undefined;
  const resolved = file === undefined ? specifier : pathToFileURL(file).href;
  let module: Record<string, unknown>;
  try {
    module = (await import(
      reimporting && file !== undefined ? await versioned(resolved, file) : resolved
    )) as Record<string, unknown>;
  } catch (error) {
    throw new PluginLoadError(`${label}: cannot import "${specifier}": ${(error as Error).message}`, {
      cause: error,
      hint: importHint(error, { specifier, resolved, baseDir }),
    });
  }
  if (!(exportName in module)) {
    const exports = Object.keys(module);
    const suggestion = nearMatch(exportName, exports);
    throw new PluginLoadError(`${label}: "${specifier}" has no export "${exportName}"`, {
      hint: `${suggestion ? `Did you mean "${suggestion}"? ` : ""}Its exports: ${exports.join(", ") || "none"}`,
    });
  }
  const exported = module[exportName];
  const schema = (exported as { configSchema?: unknown } | null)?.configSchema;
  const parsed =
    schema && typeof (schema as { safeParse?: unknown }).safeParse === "function"
      ? parsePluginConfig(schema as Parameters<typeof parsePluginConfig>[0], config, { kind, type: impl })
      : config;
  return { exported, parsed };
}

let reimporting = false;

/**
 * Import `impl` modules that are files anew once they have changed on disk (`keel dev`, which reloads agents
 * when their modules change). Node keeps one instance of a module per URL, so a changed file is imported under
 * a URL that names its modification time; its own imports are not imported again. Off by default: a served
 * runtime imports each module once.
 */
export function reimportChangedModules(enabled: boolean): void {
  reimporting = enabled;
}

/** The module's URL with its file's modification time, or the plain URL when the file cannot be read. */
async function versioned(url: string, file: string): Promise<string> {
  try {
    const { mtimeMs, size } = await stat(file);
    return `${url}?mtime=${mtimeMs}-${size}`;
  } catch {
    return url;
  }
}

/** Kinds whose plugins are functions themselves: an exported function is used as it is, not called. */
const FUNCTIONS_ARE_PLUGINS: ReadonlySet<PluginKind> = new Set<PluginKind>(["middleware"]);

/** What an `impl` import tried: the specifier as written, what it resolved to, where paths resolve from. */
interface ImportAttempt {
  specifier: string;
  resolved: string;
  baseDir: string;
}

/** Say which module is missing: the plugin itself (a path to fix or a package to install) or one of its imports. */
function importHint(error: unknown, { specifier, resolved, baseDir }: ImportAttempt): string {
  if ((error as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") {
    return "The module failed while loading; run it directly to see the error";
  }
  const message = (error as Error).message;
  const found = /Cannot find (?:module|package) '([^']+)'/.exec(message)?.[1];
  const missing = found?.startsWith("file:") ? fileURLToPath(found) : found;
  const isPath = specifier.startsWith(".") || path.isAbsolute(specifier);
  const missingIsPlugin =
    missing === undefined ||
    (isPath
      ? fileURLToPath(resolved) === missing
      : missing === specifier || missing.includes(`/node_modules/${packageName(specifier)}`));
  if (missingIsPlugin) {
    return isPath
      ? `No module at ${path.resolve(baseDir, specifier)}; paths resolve against the config file's directory`
      : `Install it: npm install ${packageName(specifier)}`;
  }
  if (path.isAbsolute(missing)) return `The plugin imports ${missing}, which does not exist`;
  const dependency = packageName(missing);
  return `The plugin imports "${dependency}", which is not installed. Install it: npm install ${dependency}`;
}

function isClass(value: unknown): boolean {
  return typeof value === "function" && /^class[\s{]/.test(Function.prototype.toString.call(value));
}

function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}
