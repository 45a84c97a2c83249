import { z } from "zod";
import type { Tool, ToolResult } from "../../contracts/tool.js";
import { defineTool } from "../../tools/define-tool.js";
import { programToolPlugin } from "./program-tool-config.js";
import { programToolSpec } from "./program-tool-spec.js";
import { type ProgramRunData, type ProgramToolOptions, runProgram } from "./run-program.js";
import { splitCommandLine } from "./split-command-line.js";

export type ExecuteCommandToolOptions = ProgramToolOptions;
export type ExecuteCommandData = ProgramRunData;

/**
 * `execute_command(command)`: one command line, split into argv by {@link splitCommandLine} and run exactly as
 * `shell_exec` runs its program — no shell, in the sandbox workspace, with the passthrough and `set_env`
 * variables only, a timeout and bounded output; the allow-list applies to argv[0]. Shell operators, expansions
 * and globs are refused (`shell.command_syntax`) with what to do instead. Shell by declaration: off unless
 * `permissions.enable: ["shell"]`.
 */
export function createExecuteCommandTool(options: ExecuteCommandToolOptions): Tool {
  return defineTool({
    name: "execute_command",
    ...programToolSpec(
      "Run one command line in the workspace, e.g. `git log -n 3 --format='%h %s'`. It runs WITHOUT a shell: " +
        "quotes and backslashes group words, but pipes, ;, &&, redirections, $variables, $(...), backticks and " +
        "globs are refused; run one program per call.",
      options,
    ),
    inputSchema: z.object({
      command: z.string().min(1).describe("One command line: a program and its arguments, quoted as in sh"),
    }),
    execute: ({ command }, ctx): Promise<ToolResult<ExecuteCommandData>> => {
      const [program, ...args] = splitCommandLine(command);
      return runProgram({ toolName: "execute_command", command: program!, args }, options, ctx);
    },
  }) as Tool;
}

/** `{"id": "sh", "type": "execute_command", "config": {"command_allowlist": ["git"]}}`, in the agent's sandbox. */
export const executeCommandToolPlugin = programToolPlugin("execute_command", createExecuteCommandTool);
