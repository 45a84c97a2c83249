import { z } from "zod";
import type { Tool, ToolResult } from "../../contracts/tool.js";
import type { SandboxProvider } from "../../sandbox/sandbox-provider.js";
import { defineTool } from "../../tools/define-tool.js";
import { okResult } from "./tool-result.js";

/**
 * `delete_file(path)`: off unless a config lists it, destructive by declaration, and asks for approval on every
 * call (the effective policy's rule for destructive operations decides on top of that).
 */
export function createDeleteFileTool(options: { sandbox: SandboxProvider }): Tool {
  return defineTool({
    name: "delete_file",
    description: "Delete one file in the workspace (not a directory). Needs approval.",
    inputSchema: z.object({
      path: z.string().describe("File path relative to the workspace"),
    }),
    writesFiles: true,
    sideEffects: "destructive",
    approvalMode: "always",
    durableIdempotent: false,
    execute: async ({ path }, ctx): Promise<ToolResult<{ path: string; deleted: true }>> => {
      const sandbox = await options.sandbox(ctx);
      const result = await sandbox.deleteFile(path, { tool: "delete_file" });
      return okResult(`Deleted ${result.path}`, { path: result.path, deleted: true });
    },
  }) as Tool;
}
