import { z } from "zod";
import type { Tool, ToolResult } from "../../contracts/tool.js";
import type { WriteResult } from "../../sandbox/sandbox.js";
import type { SandboxProvider } from "../../sandbox/sandbox-provider.js";
import { defineTool } from "../../tools/define-tool.js";
import { okResult } from "./tool-result.js";

/** `write_file(path, content, mode)`: replace or append, creating the file and its directories. */
export function createWriteFileTool(options: { sandbox: SandboxProvider; maxWriteBytes: number }): Tool {
  return defineTool({
    name: "write_file",
    description:
      "Write UTF-8 text to a file in the workspace, creating it (and its directories) if needed. " +
      `mode 'w' replaces the file, 'a' appends to it. At most ${options.maxWriteBytes} bytes per call.`,
    inputSchema: z.object({
      path: z.string().describe("File path relative to the workspace, e.g. 'reports/summary.md'"),
      content: z.string().describe("The text to write"),
      mode: z.enum(["w", "a"]).optional().describe("'w' to replace (default), 'a' to append"),
    }),
    writesFiles: true,
    sideEffects: "write",
    // Appending twice is not writing once: a started call with no recorded result is not silently re-run.
    durableIdempotent: false,
    execute: async ({ path, content, mode }, ctx): Promise<ToolResult<WriteResult>> => {
      const sandbox = await options.sandbox(ctx);
      const result = await sandbox.writeFile(path, content, { tool: "write_file", mode: mode ?? "w" });
      const how = result.created ? "created" : result.mode === "a" ? "appended" : "replaced";
      return okResult(
        `Wrote ${result.bytesWritten} bytes to ${result.path} (${how}; now ${result.totalBytes} bytes)`,
        result,
      );
    },
  }) as Tool;
}
