import path from "node:path";
import type { SandboxConfig } from "../config/app-config-schema.js";
import { Sandbox, type SandboxOptions } from "./sandbox.js";
import type { SandboxLimits } from "./sandbox-limits.js";
import type { SandboxRootOptions } from "./sandbox-roots.js";

/** What a sandbox needs of a tool call: the run, and the run folder's workspace when there is one. */
export interface WorkspaceContext {
  readonly runId: string;
  /** The run's `workspace/` directory, when the runtime keeps run folders. */
  readonly workspaceDir?: string;
}

/** The sandbox of the run a tool call belongs to. */
export type SandboxProvider = (context: WorkspaceContext) => Promise<Sandbox>;

export interface SandboxSettings {
  /** Configured roots (`sandbox.roots`); relative paths resolve against `baseDir`. Absent: the run's workspace. */
  roots?: readonly SandboxRootOptions[];
  /** Where relative roots and the default run folders live (the config file's directory). Default the cwd. */
  baseDir?: string;
  limits?: Partial<SandboxLimits>;
  /** Where a run's workspace is without configured roots. Default {@link defaultWorkspaceDir}. */
  workspaceDir?: (context: WorkspaceContext) => string;
  useProcFd?: boolean;
  beforeOpen?: SandboxOptions["beforeOpen"];
}

/** An agent's `sandbox` config as settings; the model never chooses a root. */
export function sandboxSettingsFromConfig(
  config: SandboxConfig | undefined,
  baseDir: string,
): SandboxSettings {
  const settings: SandboxSettings = { baseDir };
  if (config?.roots !== undefined && config.roots.length > 0) settings.roots = config.roots;
  const limits: Partial<SandboxLimits> = {};
  if (config?.max_read_bytes !== undefined) limits.maxReadBytes = config.max_read_bytes;
  if (config?.max_write_bytes !== undefined) limits.maxWriteBytes = config.max_write_bytes;
  if (config?.max_list_entries !== undefined) limits.maxListEntries = config.max_list_entries;
  settings.limits = limits;
  return settings;
}

/**
 * The run's workspace: the `workspaceDir` a run folder puts on the context (`runtime.run_folders`), else
 * `<baseDir>/runs/<run-id>/workspace`, the same layout without the rest of the run folder.
 */
export function defaultWorkspaceDir(context: WorkspaceContext, baseDir: string): string {
  if (typeof context.workspaceDir === "string" && context.workspaceDir !== "") return context.workspaceDir;
  return path.join(path.resolve(baseDir), "runs", runFolderName(context.runId), "workspace");
}

/** A run id as one safe path segment. */
export function runFolderName(runId: string): string {
  const encoded = encodeURIComponent(runId);
  return encoded === "" || encoded === "." || encoded === ".." ? `_${encoded}` : encoded;
}

/**
 * The sandbox each call gets. Configured roots make one sandbox shared by every run; without them each run
 * gets its own workspace, created on first use, and only that as a read-write root.
 */
export function createSandboxProvider(settings: SandboxSettings): SandboxProvider {
  const baseDir = settings.baseDir ?? process.cwd();
  const base: Omit<SandboxOptions, "roots"> = {};
  if (settings.limits !== undefined) base.limits = settings.limits;
  if (settings.useProcFd !== undefined) base.useProcFd = settings.useProcFd;
  if (settings.beforeOpen !== undefined) base.beforeOpen = settings.beforeOpen;
  if (settings.roots !== undefined) {
    const roots = settings.roots.map((root) => ({
      path: path.resolve(baseDir, root.path),
      mode: root.mode,
    }));
    let shared: Promise<Sandbox> | undefined;
    return () => {
      shared ??= Sandbox.create({ ...base, roots }).catch((error: unknown) => {
        shared = undefined;
        throw error;
      });
      return shared;
    };
  }
  const workspaceOf = settings.workspaceDir ?? ((context) => defaultWorkspaceDir(context, baseDir));
  // The calls of one run follow each other: keep the last run's sandbox rather than one per run forever.
  let last: { dir: string; sandbox: Promise<Sandbox> } | undefined;
  return (context) => {
    const dir = workspaceOf(context);
    if (last?.dir !== dir) {
      const sandbox = Sandbox.create({
        ...base,
        roots: [{ path: dir, mode: "rw" }],
        createMissingRoots: true,
      });
      sandbox.catch(() => {
        if (last?.sandbox === sandbox) last = undefined;
      });
      last = { dir, sandbox };
    }
    return last.sandbox;
  };
}
