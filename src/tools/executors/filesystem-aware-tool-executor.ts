import { z } from "zod";
import type {
  StreamingToolExecutor,
  ToolExecutionRequest,
  ToolExecutionResult,
  ToolExecutionStreamPart,
  ToolExecutor,
} from "../../contracts/tool.js";
import { ToolError } from "../../errors/error-classes.js";
import { KeelError } from "../../errors/keel-error.js";
import type { SandboxAccess } from "../../sandbox/checked-path.js";
import type { SandboxProvider } from "../../sandbox/sandbox-provider.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";
import { executeStreamOf } from "../execute-tool-call.js";

export const filesystemAwareToolExecutorConfigSchema = builtOnFirstUse(() =>
  z.object({
    inner: z.unknown().default({ type: "safe" }),
    /** Argument names that hold paths; absent: {@link isPathArgumentName} decides. */
    path_arguments: z.array(z.string().min(1)).min(1).optional(),
  }),
);

export interface FilesystemAwareToolExecutorOptions {
  /** What runs the calls the sandbox lets through. */
  inner: ToolExecutor;
  /** The sandbox of the run a call belongs to: the agent's `sandbox` roots, else the run's workspace. */
  sandbox: SandboxProvider;
  /** Argument names that hold paths; absent: {@link isPathArgumentName}. */
  pathArguments?: readonly string[];
}

/**
 * The `filesystem_aware` executor: before a tool that declares `readsFiles` or `writesFiles` runs, each of its
 * path arguments is checked against the run's sandbox — under a root for a read, under a read-write root for a
 * write (a tool that writes files has all its paths checked as writes, since which one it writes is not
 * declared). A refused call does not run: it fails with the `SandboxError` the filesystem tools throw for the
 * same path (`path_outside_sandbox`, `path_read_only`, …), so the model reads the same refusal and the run goes
 * on. Tools that declare neither, and calls with no path argument, pass straight to the inner executor.
 */
export class FilesystemAwareToolExecutor implements StreamingToolExecutor {
  constructor(private readonly options: FilesystemAwareToolExecutorOptions) {}

  get inner(): ToolExecutor {
    return this.options.inner;
  }

  async execute(request: ToolExecutionRequest): Promise<ToolExecutionResult> {
    return (await this.refusal(request)) ?? this.options.inner.execute(request);
  }

  /** A streaming tool keeps its stream through the inner executor once its paths are allowed. */
  async *executeStream(request: ToolExecutionRequest): AsyncIterable<ToolExecutionStreamPart> {
    const refusal = await this.refusal(request);
    if (refusal) {
      yield { type: "result", result: refusal };
      return;
    }
    yield* executeStreamOf(this.options.inner, request);
  }

  /** The failed result of a call whose paths the sandbox refuses, or undefined when it may run. */
  private async refusal(request: ToolExecutionRequest): Promise<ToolExecutionResult | undefined> {
    const { readsFiles, writesFiles } = request.executionSpec;
    if (!readsFiles && !writesFiles) return undefined;
    const paths = this.pathArguments(request.params);
    if (paths.length === 0) return undefined;
    const access: SandboxAccess = writesFiles ? "write" : "read";
    try {
      const sandbox = await this.options.sandbox(request.context);
      for (const input of paths) await sandbox.check(input, access, request.toolId);
      return undefined;
    } catch (error) {
      return refused(request, error);
    }
  }

  async close(): Promise<void> {
    await this.options.inner.close?.();
  }

  /** The path values among the top-level arguments: strings, or arrays of strings. */
  private pathArguments(params: Record<string, unknown>): unknown[] {
    const names = this.options.pathArguments;
    const paths: unknown[] = [];
    for (const [name, value] of Object.entries(params ?? {})) {
      if (names === undefined ? !isPathArgumentName(name) : !names.includes(name)) continue;
      if (Array.isArray(value)) paths.push(...value);
      else if (value !== undefined && value !== null) paths.push(value);
    }
    return paths;
  }
}

const PATH_NAMES = new Set([
  "path",
  "paths",
  "file",
  "files",
  "filename",
  "filepath",
  "dir",
  "dirs",
  "directory",
  "directories",
  "folder",
  "cwd",
  "source",
  "sources",
  "src",
  "destination",
  "dest",
  "target",
]);

/**
 * Whether an argument name says it holds a path: `path`, `file`, `dir`, `source`, `destination` and their
 * usual spellings, or a name ending in `_path`, `_file`, `_dir` (or `Path`, `File`, `Dir`, plurals too).
 */
export function isPathArgumentName(name: string): boolean {
  if (PATH_NAMES.has(name.toLowerCase())) return true;
  return /(?:_(?:path|file|dir|directory)|Path|File|Dir|Directory)s?$/.test(name);
}

/** A refusal as a failed call: the tool never ran. A path that cannot be resolved fails the same way. */
function refused(request: ToolExecutionRequest, error: unknown): ToolExecutionResult {
  const exception = KeelError.isInstance(error)
    ? error
    : new ToolError(`${request.toolId}: ${(error as Error)?.message ?? String(error)}`, {
        cause: error,
        hint: "Check the agent's sandbox roots",
      });
  return {
    toolId: request.toolId,
    success: false,
    error: exception.message,
    exception,
    metadata: { sandboxRefused: true },
  };
}
