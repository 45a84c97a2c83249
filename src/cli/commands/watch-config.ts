import { existsSync, type FSWatcher, watch } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { loadConfig } from "../../config/load-config.js";
import { KeelError } from "../../errors/keel-error.js";
import { reimportChangedModules } from "../../plugins/load-plugin.js";
import type { Runtime } from "../../runtime/runtime.js";
import { type ConfigReferences, configReferences } from "./config-references.js";
import type { OutputStream } from "./validate.js";

export interface ConfigWatcher {
  close(): Promise<void>;
}

/** Editors write a file in bursts (truncate, write, rename): one reload for a burst, once it has settled. */
const SETTLE_MS = 100;

/** What changed in one settled burst. */
interface Changes {
  config: boolean;
  modules: Set<string>;
  skills: boolean;
}

const noChanges = (): Changes => ({ config: false, modules: new Set(), skills: false });

/**
 * Reload what `keel dev` serves whenever its config or a file the config references changes: the config file
 * itself (agent definitions), the modules its `impl` refs name (the agents using a changed module are loaded
 * again, with the module imported anew), and the `local` skills manager's folders (rescanned). Folders are
 * watched rather than files: an editor that saves by writing a new file and renaming it over the old one would
 * end a watch on the file itself. The watched set follows the config as it is reloaded. Reloads never overlap;
 * a config that does not load is reported and the last good one stays. Resolves once every folder is watched.
 */
export async function watchConfig(
  runtime: Runtime,
  configPath: string,
  io: { stdout: OutputStream; stderr: OutputStream },
): Promise<ConfigWatcher> {
  const path = resolve(configPath);
  const name = basename(path);
  const baseDir = dirname(path);
  reimportChangedModules(true);
  let references: ConfigReferences = { modules: new Map(), skillDirs: [] };
  // One watcher per folder; skills folders are watched with their sub-folders.
  const watchers = new Map<string, FSWatcher>();
  let pending = noChanges();
  let timer: NodeJS.Timeout | undefined;
  let reloading: Promise<void> = Promise.resolve();
  let closed = false;

  const refused = (what: string, thrown: unknown, outcome: string) => {
    const hint = KeelError.isInstance(thrown) && thrown.hint ? `\n  ${thrown.hint}` : "";
    io.stderr.write(`${what} was not reloaded, ${outcome}: ${(thrown as Error)?.message}${hint}\n`);
  };

  const reloadConfig = async (): Promise<Set<string>> => {
    try {
      const { changedAgents } = await runtime.reload();
      io.stdout.write(
        `Reloaded ${name}: ${
          changedAgents.length === 0 ? "no agent changed" : `changed ${changedAgents.join(", ")}`
        }; serving ${runtime.listAgents().length} agent(s)\n`,
      );
      return new Set(changedAgents);
    } catch (thrown) {
      refused(name, thrown, "the agents it last loaded still serve");
      return new Set();
    }
  };

  const reloadModule = async (file: string, done: Set<string>) => {
    const shown = relative(baseDir, file) || file;
    const users = references.modules.get(file);
    if (users === undefined) return;
    if (users.component) {
      io.stderr.write(`${shown} changed: a runtime component loads it; restart keel dev to load it again\n`);
    }
    const agents = [...users.agents].filter((id) => !done.has(id));
    if (agents.length === 0) return;
    for (const id of agents) {
      done.add(id);
      await runtime.invalidateAgent(id);
    }
    try {
      // Loaded now rather than at the next run, so that a module that no longer loads is reported here.
      for (const id of agents) await runtime.getEffectivePolicy(id);
      io.stdout.write(`Reloaded ${shown}: agent(s) ${agents.join(", ")} loaded again\n`);
    } catch (thrown) {
      refused(shown, thrown, `agent(s) ${agents.join(", ")} will fail until it loads`);
    }
  };

  const rescanSkills = async () => {
    const skills = runtime.skillsManager as { rescan?: () => Promise<Record<string, unknown>> };
    if (typeof skills.rescan !== "function") return;
    try {
      const found = await skills.rescan();
      io.stdout.write(`Rescanned skills: ${Object.keys(found).length} skill(s)\n`);
    } catch (thrown) {
      refused("skills", thrown, "the skills found before still serve");
    }
  };

  const apply = async (changes: Changes) => {
    if (closed) return;
    const done = changes.config ? await reloadConfig() : new Set<string>();
    for (const file of changes.modules) await reloadModule(file, done);
    if (changes.skills) await rescanSkills();
    if (changes.config) await follow();
  };

  const schedule = (mark: (changes: Changes) => void) => {
    if (closed) return;
    mark(pending);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const changes = pending;
      pending = noChanges();
      reloading = reloading.then(() => apply(changes));
    }, SETTLE_MS);
  };

  const onChange = (dir: string, changed: string | null) => {
    // Without a name the platform could not say which file changed: the config is read again to be safe.
    if (changed === null) return schedule((changes) => (changes.config = true));
    const file = join(dir, changed);
    if (file === path) schedule((changes) => (changes.config = true));
    else if (references.modules.has(file)) schedule((changes) => changes.modules.add(file));
    else if (references.skillDirs.some((skills) => file.startsWith(`${skills}/`) || file === skills))
      schedule((changes) => (changes.skills = true));
  };

  /** Watch the folders the config and what it references live in, and stop watching the ones it left. */
  const follow = async () => {
    try {
      const { config } = await loadConfig(path);
      references = configReferences(config, baseDir);
    } catch {
      // A config that does not load keeps the watched set of the last one that did.
    }
    if (closed) return;
    const wanted = new Map<string, boolean>([[baseDir, false]]);
    for (const file of references.modules.keys())
      wanted.set(dirname(file), wanted.get(dirname(file)) ?? false);
    for (const dir of references.skillDirs) if (existsSync(dir)) wanted.set(dir, true);
    for (const [dir, watcher] of watchers) {
      if (!wanted.has(dir)) {
        watcher.close();
        watchers.delete(dir);
      }
    }
    for (const [dir, recursive] of wanted) {
      if (watchers.has(dir) || !existsSync(dir)) continue;
      try {
        watchers.set(
          dir,
          watch(dir, { recursive }, (_event, changed) => onChange(dir, changed)),
        );
      } catch (thrown) {
        io.stderr.write(`Cannot watch ${dir}: ${(thrown as Error)?.message}\n`);
      }
    }
  };

  await follow();
  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
      await reloading;
    },
  };
}
