import type { Dirent } from "node:fs";
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { nearMatch } from "../config/near-match.js";
import { ConfigError, PluginLoadError } from "../errors/error-classes.js";
import { getLogger } from "../logging/logger.js";
import type { SessionManager } from "../sessions/session-manager.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";
import { parseAllowedTools, parseSkillDocument, parseSkillPermissions } from "./skill-front-matter.js";
import type { SessionSkillSummary, SkillReference, SkillsManager } from "./skills-manager.js";

/** The config of the `local` skills manager. */
export const localSkillsManagerConfigSchema = builtOnFirstUse(() =>
  z.object({
    // No default here: an absent key means the default `skills` directory, which may be missing without a warning.
    search_paths: z.array(z.string().min(1)).optional(),
    enabled: z.array(z.string().min(1)).optional(),
  }),
);

/** Reference files larger than this are left out of `loadReferences`. */
export const MAX_SKILL_REFERENCE_BYTES = 256 * 1024;

/** What a skill's `run` export receives besides the payload. */
export interface SkillRunContext {
  sessionId: string;
  skillName: string;
  /** The skill's directory (resolved). */
  skillDir: string;
}

/** Options of {@link LocalSkillsManager}. */
export interface LocalSkillsManagerOptions {
  /** Directories whose immediate sub-directories are skills; relative ones resolve against `baseDir`. */
  searchPaths?: string[];
  /** Only these skill names; absent or empty means every skill found. */
  enabled?: string[];
  /** Default: the process's working directory. */
  baseDir?: string;
  /** Sessions whose prepared skill set is remembered (least recently used ones are forgotten). */
  maxCachedSessions?: number;
}

interface DiscoveredSkill {
  summary: SessionSkillSummary;
  /** The `entry` front-matter value, as written. */
  entry: string | undefined;
}

type SkillSet = ReadonlyMap<string, DiscoveredSkill>;

const NO_SKILLS: { skills: SkillSet; summaries: Record<string, SessionSkillSummary> } = {
  skills: new Map(),
  summaries: Object.freeze({}) as Record<string, SessionSkillSummary>,
};

const FRONT_MATTER_KEYS = new Set(["name", "description", "allowed-tools", "permissions", "entry"]);

/**
 * Skills from directories on disk: each `<search path>/<skill>/SKILL.md` with YAML front matter (`name`
 * required; `description`, `allowed-tools`, `entry` optional; other keys kept as metadata). Directories are
 * scanned once and the result cached until {@link LocalSkillsManager.rescan}.
 */
export class LocalSkillsManager implements SkillsManager {
  readonly searchPaths: readonly string[];
  readonly enabled: readonly string[];
  /** Whether the search paths were configured (not the default `skills`). */
  private readonly explicitPaths: boolean;
  private readonly maxCachedSessions: number;
  private discovery: Promise<SkillSet> | undefined;
  private readonly sessions = new Map<
    string,
    { skills: SkillSet; summaries: Record<string, SessionSkillSummary> }
  >();

  constructor(options: LocalSkillsManagerOptions = {}) {
    const baseDir = options.baseDir ?? process.cwd();
    this.explicitPaths = options.searchPaths !== undefined;
    this.searchPaths = (options.searchPaths ?? ["skills"]).map((searchPath) =>
      path.resolve(baseDir, searchPath),
    );
    this.enabled = options.enabled ?? [];
    this.maxCachedSessions = options.maxCachedSessions ?? 1000;
  }

  async prepareSession(
    sessionId: string,
    _sessionManager?: SessionManager,
  ): Promise<Record<string, SessionSkillSummary>> {
    return (await this.session(sessionId)).summaries;
  }

  async loadReferences(
    sessionId: string,
    skillName: string,
    _sessionManager?: SessionManager,
  ): Promise<SkillReference[]> {
    const skill = await this.lookup(sessionId, skillName);
    const skillDir = skill.summary.path;
    const text = await readFile(path.join(skillDir, "SKILL.md"), "utf8");
    const references: SkillReference[] = [{ path: "SKILL.md", content: parseSkillDocument(text).body }];
    await collectReferences(
      { skillDir, found: references, visited: new Set() },
      path.join(skillDir, "references"),
    );
    return references;
  }

  // biome-ignore lint/complexity/useMaxParams: this is the skills seam's published signature, shared by every SkillsManager
  async runSkill(
    sessionId: string,
    skillName: string,
    payload: Record<string, unknown>,
    _sessionManager?: SessionManager,
  ): Promise<Record<string, unknown>> {
    const skill = await this.lookup(sessionId, skillName);
    const skillDir = skill.summary.path;
    if (skill.entry === undefined) {
      throw new ConfigError(`skill "${skillName}" has no entry module to run`, {
        hint: `Add "entry: <module path>" to the front matter of ${path.join(skillDir, "SKILL.md")}; the module must export run(payload, context)`,
        context: { sessionId },
      });
    }
    const modulePath = await resolveEntry(skillName, skillDir, skill.entry);
    let module: { run?: unknown };
    try {
      module = (await import(pathToFileURL(modulePath).href)) as { run?: unknown };
    } catch (error) {
      throw new PluginLoadError(`skill "${skillName}": its entry module ${skill.entry} failed to import`, {
        hint: `Fix the module at ${modulePath}: ${error instanceof Error ? error.message : String(error)}`,
        cause: error,
        context: { sessionId },
      });
    }
    if (typeof module.run !== "function") {
      throw new ConfigError(`skill "${skillName}": its entry module ${skill.entry} exports no run function`, {
        hint: "Export a function run(payload, {sessionId, skillName, skillDir}) from the entry module",
        context: { sessionId },
      });
    }
    const context: SkillRunContext = { sessionId, skillName, skillDir };
    const result: unknown = await module.run(payload, context);
    if (result === undefined || result === null) return {};
    // The seam promises an object; a bare value is wrapped rather than lost.
    return typeof result === "object" && !Array.isArray(result)
      ? (result as Record<string, unknown>)
      : { result };
  }

  /** Scan the search paths again; sessions prepared before see the new set on their next call. */
  async rescan(): Promise<Record<string, SessionSkillSummary>> {
    this.discovery = undefined;
    this.sessions.clear();
    return summariesOf(await this.discover());
  }

  async close(): Promise<void> {
    this.sessions.clear();
    this.discovery = undefined;
  }

  private async session(sessionId: string) {
    const cached = this.sessions.get(sessionId);
    if (cached) {
      // Re-inserted so the map's order is least recently used first.
      this.sessions.delete(sessionId);
      this.sessions.set(sessionId, cached);
      return cached;
    }
    const skills = await this.discover();
    // Without skills there is nothing a session could change: share one empty entry instead of caching per session.
    if (skills.size === 0) return NO_SKILLS;
    const entry = { skills, summaries: summariesOf(skills) };
    this.sessions.set(sessionId, entry);
    if (this.sessions.size > this.maxCachedSessions) {
      const oldest = this.sessions.keys().next().value;
      if (oldest !== undefined) this.sessions.delete(oldest);
    }
    return entry;
  }

  private async lookup(sessionId: string, skillName: string): Promise<DiscoveredSkill> {
    const { skills } = await this.session(sessionId);
    const skill = skills.get(skillName);
    if (skill) return skill;
    const names = [...skills.keys()];
    const near = nearMatch(skillName, names);
    let hint: string;
    if (near !== undefined) hint = `Did you mean "${near}"? Known skills: ${names.join(", ")}`;
    else if (names.length > 0) hint = `Known skills: ${names.join(", ")}`;
    else
      hint = `No skills were found under ${this.searchPaths.join(", ")}; a skill is a directory holding a SKILL.md`;
    throw new ConfigError(`unknown skill "${skillName}"`, { hint, context: { sessionId } });
  }

  private discover(): Promise<SkillSet> {
    // The promise is cached, so concurrent first calls share one scan.
    if (!this.discovery) {
      const discovery = this.scan();
      this.discovery = discovery;
      // A failed scan is not cached: the next call tries again.
      discovery.catch(() => {
        if (this.discovery === discovery) this.discovery = undefined;
      });
    }
    return this.discovery;
  }

  private async scan(): Promise<SkillSet> {
    const skills = new Map<string, DiscoveredSkill>();
    // Every name on disk, enabled or not, so a misspelt `enabled` entry gets a suggestion.
    const found = new Set<string>();
    for (const searchPath of this.searchPaths) {
      let root: string;
      let entries: Dirent[];
      try {
        root = await realpath(searchPath);
        entries = await readdir(root, { withFileTypes: true });
      } catch (error) {
        // Only the default `skills` directory may be absent quietly: a configured path that is missing or
        // unreadable is a mistake the user should see.
        const code = (error as NodeJS.ErrnoException)?.code;
        if (!this.explicitPaths && code === "ENOENT") {
          getLogger().debug(`skills: search path ${searchPath} does not exist`);
        } else {
          getLogger().warn(
            `skills: search path ${searchPath} cannot be read (${code ?? (error as Error)?.message}); its skills are skipped`,
            { searchPath, cause: error },
          );
        }
        continue;
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
        const skill = await readSkill(root, entry.name);
        if (!skill) continue;
        const name = skill.summary.name;
        found.add(name);
        if (this.enabled.length > 0 && !this.enabled.includes(name)) continue;
        if (skills.has(name)) {
          getLogger().warn(
            `skills: "${name}" at ${skill.summary.path} is skipped; a skill of that name was found first at ${skills.get(name)?.summary.path}`,
          );
          continue;
        }
        skills.set(name, skill);
      }
    }
    for (const name of this.enabled) {
      if (skills.has(name)) continue;
      const near = nearMatch(name, found);
      getLogger().warn(
        `skills: enabled skill "${name}" was not found${near === undefined ? "" : ` (did you mean "${near}"?)`}`,
      );
    }
    return skills;
  }
}

/** Fresh summary objects, so what one session's caller changes never shows in another session. */
function summariesOf(skills: SkillSet): Record<string, SessionSkillSummary> {
  const summaries: Record<string, SessionSkillSummary> = {};
  for (const [name, { summary }] of skills) {
    summaries[name] = {
      ...summary,
      allowedTools: [...summary.allowedTools],
      metadata: { ...summary.metadata },
    };
    if (summary.permissions !== undefined) summaries[name]!.permissions = [...summary.permissions];
  }
  return summaries;
}

/** True when `child` lies strictly inside `parent` (both resolved). */
function isInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative !== "" && relative.split(path.sep)[0] !== ".." && !path.isAbsolute(relative);
}

/** YAML errors quote the offending lines below the first; a log line needs only the first. */
function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!.trim();
}

function hasParentSegment(value: string): boolean {
  return value.split(/[\\/]/).includes("..");
}

async function readSkill(root: string, directoryName: string): Promise<DiscoveredSkill | undefined> {
  const candidate = path.join(root, directoryName);
  let skillDir: string;
  try {
    skillDir = await realpath(candidate);
    if (!(await stat(skillDir)).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  if (hasParentSegment(directoryName) || !isInside(root, skillDir)) {
    getLogger().warn(`skills: ${candidate} resolves outside its search path ${root}; skipped`);
    return undefined;
  }
  const skillFile = path.join(skillDir, "SKILL.md");
  let text: string;
  try {
    text = await readFile(skillFile, "utf8");
  } catch {
    // A directory without SKILL.md is simply not a skill.
    return undefined;
  }
  let frontMatter: Record<string, unknown> | null;
  try {
    frontMatter = parseSkillDocument(text).frontMatter;
  } catch (error) {
    getLogger().warn(`skills: ${skillFile} has invalid front matter (${firstLine(error)}); skipped`);
    return undefined;
  }
  const rawName = frontMatter?.name;
  const name = typeof rawName === "string" || typeof rawName === "number" ? String(rawName).trim() : "";
  if (!frontMatter || name === "") {
    getLogger().warn(`skills: ${skillFile} has no "name" in its front matter; skipped`);
    return undefined;
  }
  const metadata: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(frontMatter))
    if (!FRONT_MATTER_KEYS.has(key)) metadata[key] = value;
  const rawEntry = frontMatter.entry;
  if (rawEntry !== undefined && typeof rawEntry !== "string") {
    getLogger().warn(`skills: "entry" in ${skillFile} is not a string; the skill cannot be run`);
  }
  const description = frontMatter.description;
  const summary: SessionSkillSummary = {
    name,
    description: description === undefined || description === null ? "" : String(description),
    allowedTools: parseAllowedTools(frontMatter["allowed-tools"]),
    path: skillDir,
    metadata,
  };
  const permissions = parseSkillPermissions(frontMatter.permissions);
  if (permissions.unknown.length > 0) {
    getLogger().warn(
      `skills: "permissions" in ${skillFile} names ${permissions.unknown.join(", ")}; a skill may request destructive, shell or network`,
    );
  }
  if (permissions.requests.length > 0) summary.permissions = permissions.requests;
  return {
    summary,
    entry: typeof rawEntry === "string" && rawEntry.trim() !== "" ? rawEntry.trim() : undefined,
  };
}

async function resolveEntry(skillName: string, skillDir: string, entry: string): Promise<string> {
  const refused = () =>
    new ConfigError(`skill "${skillName}": entry "${entry}" lies outside the skill directory`, {
      hint: `Point "entry" at a module inside ${skillDir}, without ".." segments`,
    });
  if (hasParentSegment(entry) || path.isAbsolute(entry)) throw refused();
  let modulePath: string;
  try {
    modulePath = await realpath(path.resolve(skillDir, entry));
  } catch {
    throw new ConfigError(`skill "${skillName}": entry module "${entry}" does not exist`, {
      hint: `Create ${path.resolve(skillDir, entry)} or fix "entry" in the skill's SKILL.md`,
    });
  }
  // A symlink inside the skill could still point anywhere.
  if (!isInside(skillDir, modulePath)) throw refused();
  return modulePath;
}

/** What stays the same while one skill's references tree is walked. */
interface ReferenceWalk {
  /** Nothing outside this directory may be read, even through a symlink. */
  readonly skillDir: string;
  /** References found so far, in the order they are read. */
  readonly found: SkillReference[];
  /** Real paths of directories already read. */
  readonly visited: Set<string>;
}

async function collectReferences(walk: ReferenceWalk, directory: string): Promise<void> {
  const { skillDir, found, visited } = walk;
  let entries: Dirent[];
  try {
    const real = await realpath(directory);
    if (!isInside(skillDir, real)) {
      getLogger().warn(`skills: references ${directory} resolve outside the skill directory; skipped`);
      return;
    }
    // A symlinked directory may lead back to one already read; reading it again would never end.
    if (visited.has(real)) return;
    visited.add(real);
    entries = await readdir(real, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const entryPath = path.join(directory, entry.name);
    let real: string;
    try {
      real = await realpath(entryPath);
    } catch {
      continue;
    }
    if (!isInside(skillDir, real)) {
      getLogger().warn(`skills: reference ${entryPath} resolves outside the skill directory; skipped`);
      continue;
    }
    const info = await stat(real);
    if (info.isDirectory()) {
      await collectReferences(walk, entryPath);
    } else if (info.isFile()) {
      if (info.size > MAX_SKILL_REFERENCE_BYTES) {
        getLogger().debug(
          `skills: reference ${entryPath} is over ${MAX_SKILL_REFERENCE_BYTES} bytes; skipped`,
        );
        continue;
      }
      const relative = path.relative(skillDir, entryPath).split(path.sep).join("/");
      found.push({ path: relative, content: await readFile(real, "utf8") });
    }
  }
}
