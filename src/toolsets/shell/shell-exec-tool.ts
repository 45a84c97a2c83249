import { z } from "zod";
import type { Tool, ToolResult } from "../../contracts/tool.js";
import { defineTool } from "../../tools/define-tool.js";
import { programToolPlugin } from "./program-tool-config.js";
import { programToolSpec } from "./program-tool-spec.js";
import { type ProgramRunData, type ProgramToolOptions, runProgram } from "./run-program.js";

export type ShellExecToolOptions = ProgramToolOptions;
export type ShellExecData = ProgramRunData;

/**
 * `shell_exec(command, args)`: shell by declaration, so off unless the agent's config sets
 * `permissions.enable: ["shell"]`. Runs the command with `execFile` — no shell, so no string is ever
 * interpreted: arguments go to the program as they are — in the sandbox workspace, with a minimal environment
 * (the passthrough variables and the session's `set_env` variables), a timeout and bounded output.
 */
export function createShellExecTool(options: ShellExecToolOptions): Tool {
  return defineTool({
    name: "shell_exec",
    ...programToolSpec(
      "Run one program with arguments in the workspace (no shell: pipes, globs and redirections are not " +
        "interpreted).",
      options,
    ),
    inputSchema: z.object({
      command: z.string().min(1).describe("The program, e.g. 'ls' or 'python3'"),
      args: z.array(z.string()).optional().describe("Its arguments, one per element"),
    }),
    execute: ({ command, args }, ctx): Promise<ToolResult<ShellExecData>> =>
      runProgram({ toolName: "shell_exec", command, args: args ?? [] }, options, ctx),
  }) as Tool;
}

/** `{"id": "shell_exec", "type": "shell_exec", "config": {"command_allowlist": ["ls"]}}`, in the agent's sandbox. */
export const shellExecToolPlugin = programToolPlugin("shell_exec", createShellExecTool);
