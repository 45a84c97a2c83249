import { execFile } from "node:child_process";
import { z } from "zod";
import { PermissionDeniedError, ToolTimeoutError } from "../../errors/error-classes.js";
import type { PluginDefinition } from "../../plugins/plugin-registry.js";
import {
  createSandboxProvider,
  type SandboxProvider,
  sandboxSettingsFromConfig,
} from "../../sandbox/sandbox-provider.js";
import { defineTool } from "../../tools/define-tool.js";
import type { Tool, ToolResult } from "../../tools/tool.js";

export interface ShellExecToolOptions {
  /** The sandbox whose first root (the workspace) is the working directory. */
  sandbox: SandboxProvider;
  /** Only these commands (exact names as given); absent: any. */
  commandAllowlist?: readonly string[];
  /** Default 60 s; the process is killed after it. */
  timeoutMs?: number;
  /** Bytes of stdout and of stderr kept each. Default 1 MiB. */
  captureBytes?: number;
  /** Parent environment variables passed on; the child gets these and nothing else. Default `PATH`. */
  envPassthrough?: readonly string[];
  /** Ask for approval before every call. Default false (the seed asks it of destructive operations only). */
  requireApproval?: boolean;
}

export interface ShellExecData {
  command: string;
  args: string[];
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
}

/**
 * `shell_exec(command, args)`: shell by declaration, so off unless the agent's config sets
 * `permissions.enable: ["shell"]` (SB-3). Runs the command with `execFile` — no shell, so no string is ever
 * interpreted: arguments go to the program as they are — in the sandbox workspace, with a minimal environment,
 * a timeout and bounded output.
 */
export function createShellExecTool(options: ShellExecToolOptions): Tool {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const captureBytes = options.captureBytes ?? 1024 * 1024;
  const passthrough = options.envPassthrough ?? ["PATH"];
  const allowlist = options.commandAllowlist;
  return defineTool({
    name: "shell_exec",
    description:
      "Run one program with arguments in the workspace (no shell: pipes, globs and redirections are not " +
      `interpreted). Returns exit code, stdout and stderr (at most ${captureBytes} bytes each).` +
      (allowlist ? ` Allowed commands: ${allowlist.join(", ")}.` : ""),
    inputSchema: z.object({
      command: z.string().min(1).describe("The program, e.g. 'ls' or 'python3'"),
      args: z.array(z.string()).optional().describe("Its arguments, one per element"),
    }),
    sideEffects: "shell",
    approvalMode: options.requireApproval ? "always" : "inherit",
    durableIdempotent: false,
    execute: async ({ command, args }, ctx): Promise<ToolResult<ShellExecData>> => {
      if (allowlist !== undefined && !allowlist.includes(command)) {
        throw new PermissionDeniedError(
          `shell_exec: '${command}' is not in the command allow-list (${allowlist.join(", ") || "empty"})`,
          { rule: "command_not_allowed" },
        );
      }
      if (command.includes("\0") || (args ?? []).some((arg) => arg.includes("\0"))) {
        throw new PermissionDeniedError("shell_exec: NUL bytes are refused", { rule: "command_not_allowed" });
      }
      const sandbox = await options.sandbox(ctx);
      const cwd = sandbox.roots.find((root) => root.primary)!.real;
      const env: Record<string, string> = {};
      for (const name of passthrough) {
        const value = process.env[name];
        if (value !== undefined) env[name] = value;
      }
      const argv = args ?? [];
      const data = await run(command, argv, { cwd, env, timeoutMs, captureBytes, signal: ctx?.signal });
      const status =
        data.exitCode === 0
          ? "exited 0"
          : data.signal
            ? `killed by ${data.signal}`
            : `exited ${data.exitCode}`;
      return {
        ok: data.exitCode === 0,
        summary: `${[command, ...argv].join(" ")} ${status}${data.truncated ? " (output truncated)" : ""}`,
        data,
        artifacts: [],
        ...(data.exitCode === 0
          ? {}
          : { error: { code: "shell.exit_status", message: `${command} ${status}` } }),
      };
    },
  }) as Tool;
}

function run(
  command: string,
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    timeoutMs: number;
    captureBytes: number;
    signal: AbortSignal | undefined;
  },
): Promise<ShellExecData> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        env: options.env,
        shell: false,
        timeout: options.timeoutMs,
        killSignal: "SIGKILL",
        maxBuffer: options.captureBytes,
        encoding: "utf8",
        windowsHide: true,
        ...(options.signal ? { signal: options.signal } : {}),
      },
      (error, stdout, stderr) => {
        const base = { command, args, stdout: String(stdout), stderr: String(stderr) };
        if (error === null) {
          resolve({ ...base, exitCode: 0, signal: null, truncated: false });
          return;
        }
        const failure = error as NodeJS.ErrnoException & {
          killed?: boolean;
          signal?: string | null;
          code?: unknown;
        };
        if (failure.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") {
          resolve({
            ...base,
            stdout: base.stdout.slice(0, options.captureBytes),
            stderr: base.stderr.slice(0, options.captureBytes),
            exitCode: null,
            signal: "SIGKILL",
            truncated: true,
          });
          return;
        }
        if (failure.killed && failure.signal === "SIGKILL" && !options.signal?.aborted) {
          reject(
            new ToolTimeoutError(`shell_exec: ${command} timed out after ${options.timeoutMs} ms`, {
              timeoutMs: options.timeoutMs,
            }),
          );
          return;
        }
        if (typeof failure.code === "number") {
          resolve({ ...base, exitCode: failure.code, signal: failure.signal ?? null, truncated: false });
          return;
        }
        reject(failure);
      },
    );
  });
}

const positiveInt = z.number().int().positive();
const SHELL_CONFIG = z.object({
  command_allowlist: z.array(z.string().min(1)).optional(),
  timeout_ms: positiveInt.optional(),
  capture_bytes: positiveInt.optional(),
  env_passthrough: z.array(z.string().min(1)).optional(),
  require_approval: z.boolean().optional(),
});

/** `{"id": "shell_exec", "type": "shell_exec", "config": {"command_allowlist": ["ls"]}}`, in the agent's sandbox. */
export const shellExecToolPlugin: PluginDefinition<Tool> = {
  kind: "tool",
  type: "shell_exec",
  configSchema: SHELL_CONFIG,
  create: (config, context) => {
    const parsed = SHELL_CONFIG.parse(config);
    const options: ShellExecToolOptions = {
      sandbox: createSandboxProvider(sandboxSettingsFromConfig(context.agent?.sandbox, context.baseDir)),
    };
    if (parsed.command_allowlist !== undefined) options.commandAllowlist = parsed.command_allowlist;
    if (parsed.timeout_ms !== undefined) options.timeoutMs = parsed.timeout_ms;
    if (parsed.capture_bytes !== undefined) options.captureBytes = parsed.capture_bytes;
    if (parsed.env_passthrough !== undefined) options.envPassthrough = parsed.env_passthrough;
    if (parsed.require_approval !== undefined) options.requireApproval = parsed.require_approval;
    return createShellExecTool(options);
  },
};
