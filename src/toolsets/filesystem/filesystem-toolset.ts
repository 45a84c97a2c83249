import { z } from "zod";
import type { Tool } from "../../contracts/tool.js";
import type { PluginDefinition, PluginFactoryContext } from "../../plugins/plugin-registry.js";
import { DEFAULT_SANDBOX_LIMITS } from "../../sandbox/sandbox-limits.js";
import {
  createSandboxProvider,
  type SandboxProvider,
  type SandboxSettings,
  sandboxSettingsFromConfig,
} from "../../sandbox/sandbox-provider.js";
import type { Toolset } from "../../tools/toolset.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";
import { createDeleteFileTool } from "./delete-file-tool.js";
import { createGrepFilesTool, type GrepLimits } from "./grep-files-tool.js";
import { createListFilesTool } from "./list-files-tool.js";
import { createReadFileTool } from "./read-file-tool.js";
import { createWriteFileTool } from "./write-file-tool.js";

export const FILESYSTEM_TOOL_NAMES = [
  "read_file",
  "write_file",
  "list_files",
  "grep_files",
  "delete_file",
] as const;
export type FilesystemToolName = (typeof FILESYSTEM_TOOL_NAMES)[number];

/** What `{"type": "filesystem"}` offers unless its config lists tools: `delete_file` only when listed. */
export const DEFAULT_FILESYSTEM_TOOLS: readonly FilesystemToolName[] = Object.freeze([
  "read_file",
  "write_file",
  "list_files",
  "grep_files",
]);

export interface FilesystemToolsetOptions {
  /** The sandbox: settings (roots, limits) or a provider of one per call. Default: the run's workspace. */
  sandbox?: SandboxSettings | SandboxProvider;
  /** Which tools to offer (default {@link DEFAULT_FILESYSTEM_TOOLS}). */
  tools?: readonly FilesystemToolName[];
  grep?: Partial<GrepLimits>;
}

/**
 * The filesystem toolset: `read_file`, `write_file`, `list_files`, `grep_files` and, when listed,
 * `delete_file`, all through one sandbox.
 *
 * @example
 * const fs = createFilesystemToolset({ sandbox: { roots: [{ path: "/srv/work", mode: "rw" }] } });
 * await Runtime.fromDict({ agents: [{ id: "a", name: "A", tools: [...fs.tools()] }] });
 */
export function createFilesystemToolset(options: FilesystemToolsetOptions = {}): Toolset {
  const settings = typeof options.sandbox === "function" ? undefined : (options.sandbox ?? {});
  const sandbox = typeof options.sandbox === "function" ? options.sandbox : createSandboxProvider(settings!);
  const limits = { ...DEFAULT_SANDBOX_LIMITS, ...settings?.limits };
  const names = options.tools ?? DEFAULT_FILESYSTEM_TOOLS;
  const build: Record<FilesystemToolName, () => Tool> = {
    read_file: () => createReadFileTool({ sandbox, maxReadBytes: limits.maxReadBytes }),
    write_file: () => createWriteFileTool({ sandbox, maxWriteBytes: limits.maxWriteBytes }),
    list_files: () => createListFilesTool({ sandbox, maxListEntries: limits.maxListEntries }),
    grep_files: () => createGrepFilesTool(options.grep ? { sandbox, limits: options.grep } : { sandbox }),
    delete_file: () => createDeleteFileTool({ sandbox }),
  };
  const tools = [...new Set(names)].map((name) => build[name]());
  return { kind: "toolset", name: "filesystem", tools: () => tools };
}

const grepConfigShape = builtOnFirstUse(() => {
  const positiveInt = z.number().int().positive();
  return {
    grep_max_matches: positiveInt.optional(),
    grep_max_files: positiveInt.optional(),
    grep_max_file_bytes: positiveInt.optional(),
    grep_max_scan_bytes: positiveInt.optional(),
    grep_max_pattern_length: positiveInt.optional(),
  };
});
const filesystemToolsetConfig = builtOnFirstUse(() =>
  z.object({
    tools: z.array(z.enum(FILESYSTEM_TOOL_NAMES)).min(1).optional(),
    ...grepConfigShape(),
  }),
);
const singleFilesystemToolConfig = builtOnFirstUse(() => z.object(grepConfigShape()));

function optionsFrom(
  config: z.output<ReturnType<typeof filesystemToolsetConfig>>,
  context: PluginFactoryContext,
): FilesystemToolsetOptions {
  const options: FilesystemToolsetOptions = {
    sandbox: sandboxSettingsFromConfig(context.agent?.sandbox, context.baseDir),
  };
  const grep: Partial<GrepLimits> = {};
  if (config.grep_max_matches !== undefined) grep.maxMatches = config.grep_max_matches;
  if (config.grep_max_files !== undefined) grep.maxFiles = config.grep_max_files;
  if (config.grep_max_file_bytes !== undefined) grep.maxFileBytes = config.grep_max_file_bytes;
  if (config.grep_max_scan_bytes !== undefined) grep.maxScanBytes = config.grep_max_scan_bytes;
  if (config.grep_max_pattern_length !== undefined) grep.maxPatternLength = config.grep_max_pattern_length;
  options.grep = grep;
  if (config.tools !== undefined) options.tools = config.tools;
  return options;
}

/** `{"type": "filesystem", "config": {"tools": [...]}}`: the toolset, sandboxed by the agent's `sandbox`. */
export const filesystemToolsetPlugin: PluginDefinition<Toolset> = {
  kind: "tool",
  type: "filesystem",
  get configSchema() {
    return filesystemToolsetConfig();
  },
  create: (config, context) =>
    createFilesystemToolset(optionsFrom(filesystemToolsetConfig().parse(config), context)),
};

/** Each filesystem tool as a type of its own: `{"id": "read", "type": "read_file"}`. */
export const filesystemToolPlugins: PluginDefinition<Tool>[] = FILESYSTEM_TOOL_NAMES.map((name) => ({
  kind: "tool",
  type: name,
  get configSchema() {
    return singleFilesystemToolConfig();
  },
  create: (config: Record<string, unknown>, context: PluginFactoryContext) =>
    createFilesystemToolset({
      ...optionsFrom(singleFilesystemToolConfig().parse(config), context),
      tools: [name],
    }).tools()[0]!,
}));
