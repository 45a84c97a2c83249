import type { ToolContext, ToolResult } from "../../contracts/tool.js";
import { PermissionDeniedError, ToolTimeoutError } from "../../errors/error-classes.js";
import type { SandboxProvider } from "../../sandbox/sandbox-provider.js";
import { sessionShellEnv } from "./shell-env-state.js";

/** What `shell_exec` and `execute_command` share: where, how long, how much and with what environment. */
export interface ProgramToolOptions {
  /** The sandbox whose first root (the workspace) is the working directory. */
  sandbox: SandboxProvider;
  /** Only these commands (exact names as given); absent: any. */
  commandAllowlist?: readonly string[];
  /** Default 60 s; the process is killed after it. */
  timeoutMs?: number;
  /** Bytes of stdout and of stderr kept each. Default 1 MiB. */
  captureBytes?: number;
  /**
   * Parent environment variables passed on; the child gets these, the variables `set_env` set in the session,
   * and nothing else. Default `PATH`.
   */
  envPassthrough?: readonly string[];
  /** Ask for approval before every call. Default false (the policy asks it of destructive tools only). */
  requireApproval?: boolean;
}

/** One program's run: its exit, its output (cut at `captureBytes` per stream, then `truncated`). */
export interface ProgramRunData {
  command: string;
  args: string[];
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
}

/** The program a tool runs: `toolName` names the tool in errors, `args` are passed as they are. */
export interface ProgramCall {
  toolName: string;
  command: string;
  args: string[];
}

export const DEFAULT_PROGRAM_TIMEOUT_MS = 60_000;
export const DEFAULT_CAPTURE_BYTES = 1024 * 1024;

/**
 * Run `command` with `args` for the tool `toolName`: `execFile` with `shell: false` (nothing is interpreted), in
 * the sandbox workspace, with the passthrough variables and the session's `set_env` variables only, killed
 * (SIGKILL, `ToolTimeoutError`) at the timeout, output bounded. A command outside the allow-list or a NUL byte
 * is a `PermissionDeniedError` (`command_not_allowed`); a non-zero exit is a result with `ok: false`.
 */
export async function runProgram(
  call: ProgramCall,
  options: ProgramToolOptions,
  ctx: ToolContext,
): Promise<ToolResult<ProgramRunData>> {
  const { toolName, command, args } = call;
  const allowlist = options.commandAllowlist;
  if (allowlist !== undefined && !allowlist.includes(command)) {
    throw new PermissionDeniedError(
      `${toolName}: '${command}' is not in the command allow-list (${allowlist.join(", ") || "empty"})`,
      { rule: "command_not_allowed" },
    );
  }
  if (command.includes("\0") || args.some((arg) => arg.includes("\0"))) {
    throw new PermissionDeniedError(`${toolName}: NUL bytes are refused`, { rule: "command_not_allowed" });
  }
  const sandbox = await options.sandbox(ctx);
  const cwd = sandbox.roots.find((root) => root.primary)!.real;
  const passed = (options.envPassthrough ?? ["PATH"]).flatMap((name) => {
    const value = process.env[name];
    return value === undefined ? [] : [[name, value] as const];
  });
  const env = { ...Object.fromEntries(passed), ...sessionShellEnv(ctx.session?.state) };
  const data = await execute(call, {
    cwd,
    env,
    timeoutMs: options.timeoutMs ?? DEFAULT_PROGRAM_TIMEOUT_MS,
    captureBytes: options.captureBytes ?? DEFAULT_CAPTURE_BYTES,
    signal: ctx.signal,
  });
  const status =
    data.exitCode === 0 ? "exited 0" : data.signal ? `killed by ${data.signal}` : `exited ${data.exitCode}`;
  return {
    ok: data.exitCode === 0,
    summary: `${[command, ...args].join(" ")} ${status}${data.truncated ? " (output truncated)" : ""}`,
    data,
    artifacts: [],
    ...(data.exitCode === 0 ? {} : { error: { code: "shell.exit_status", message: `${command} ${status}` } }),
  };
}

function execute(
  { toolName, command, args }: ProgramCall,
  options: {
    cwd: string;
    env: Record<string, string>;
    timeoutMs: number;
    captureBytes: number;
    signal: AbortSignal | undefined;
  },
): Promise<ProgramRunData> {
  // child_process (and the net module it loads) on the first program run, not when Keel is imported.
  const { execFile } = process.getBuiltinModule("node:child_process");
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
            new ToolTimeoutError(`${toolName}: ${command} timed out after ${options.timeoutMs} ms`, {
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
