import path from "node:path";
import type { AppConfig } from "../../config/app-config-schema.js";

/** The files and folders a config points at, besides itself: what `keel dev` watches. */
export interface ConfigReferences {
  /** Module files named by `impl` refs (absolute paths), each with the agents whose definitions name it. */
  modules: Map<string, ModuleUsers>;
  /** Skills folders of the `local` skills manager (absolute paths); their contents are watched too. */
  skillDirs: string[];
}

/** Who loads a module: agents (by id), and whether a runtime component (store, bus, skills…) does. */
export interface ModuleUsers {
  agents: Set<string>;
  component: boolean;
}

/**
 * The local files a config references, resolved as loading it resolves them: every `impl` whose module
 * specifier is a path (relative to the config's folder, or absolute) — anywhere in the config, nested refs
 * included — and the `local` skills manager's search paths. Package specifiers are left out: a package is not
 * edited while it is served.
 */
export function configReferences(config: AppConfig, baseDir: string): ConfigReferences {
  const modules = new Map<string, ModuleUsers>();
  const note = (file: string, agentId: string | undefined) => {
    let users = modules.get(file);
    if (users === undefined) {
      users = { agents: new Set(), component: false };
      modules.set(file, users);
    }
    if (agentId === undefined) users.component = true;
    else users.agents.add(agentId);
  };
  for (const agent of config.agents) {
    for (const file of implFiles(agent, baseDir)) note(file, agent.id);
  }
  const { agents: _agents, ...components } = config;
  for (const file of implFiles(components, baseDir)) note(file, undefined);
  return { modules, skillDirs: skillDirsOf(config.skills, baseDir) };
}

/** The path of every `impl` module in a value, found by walking it (code-first objects are not walked into). */
function implFiles(value: unknown, baseDir: string): string[] {
  const found: string[] = [];
  const seen = new Set<unknown>();
  const walk = (node: unknown) => {
    if (node === null || typeof node !== "object" || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    // Only plain data: a tool, model or store object given in code has no file to watch.
    const prototype = Object.getPrototypeOf(node);
    if (prototype !== Object.prototype && prototype !== null) return;
    const impl = (node as { impl?: unknown }).impl;
    if (typeof impl === "string") {
      const file = modulePath(impl, baseDir);
      if (file !== undefined) found.push(file);
    }
    for (const child of Object.values(node)) walk(child);
  };
  walk(value);
  return found;
}

/** The file an `impl` names when its specifier is a path; undefined for a package. */
function modulePath(impl: string, baseDir: string): string | undefined {
  const hash = impl.lastIndexOf("#");
  if (hash <= 0) return undefined;
  const specifier = impl.slice(0, hash);
  return specifier.startsWith(".") || path.isAbsolute(specifier)
    ? path.resolve(baseDir, specifier)
    : undefined;
}

/** The `local` skills manager's folders (its default is `skills` beside the config). */
function skillDirsOf(ref: unknown, baseDir: string): string[] {
  const skills = ref as { type?: unknown; config?: { search_paths?: unknown } } | undefined;
  if (skills?.type !== "local") return [];
  const given = skills.config?.search_paths;
  const paths = Array.isArray(given) ? given.filter((entry) => typeof entry === "string") : ["skills"];
  return paths.map((entry) => path.resolve(baseDir, entry));
}
