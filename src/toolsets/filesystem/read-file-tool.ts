import { z } from "zod";
import type { Tool, ToolResult } from "../../contracts/tool.js";
import type { ReadResult } from "../../sandbox/sandbox.js";
import type { SandboxProvider } from "../../sandbox/sandbox-provider.js";
import { defineTool } from "../../tools/define-tool.js";
import { okResult } from "./tool-result.js";

/** `read_file(path, offset?, limit?)`: bounded, with `truncated` and the total size. */
export function createReadFileTool(options: { sandbox: SandboxProvider; maxReadBytes: number }): Tool {
  return defineTool({
    name: "read_file",
    description:
      "Read a UTF-8 text file in the workspace. Returns at most " +
      `${options.maxReadBytes} bytes; when 'truncated' is true, call again with offset = nextOffset.`,
    inputSchema: z.object({
      path: z.string().describe("File path relative to the workspace, e.g. 'notes/todo.md'"),
      offset: z.number().int().min(0).optional().describe("Byte offset to start reading at (default 0)"),
      limit: z
        .number()
        .int()
        .positive()
        .optional()
        .describe(`Most bytes to return (default and maximum ${options.maxReadBytes})`),
    }),
    readsFiles: true,
    sideEffects: "read",
    concurrencySafe: true,
    execute: async ({ path, offset, limit }, ctx): Promise<ToolResult<ReadResult>> => {
      const sandbox = await options.sandbox(ctx);
      const read: { tool: string; offset?: number; limit?: number } = { tool: "read_file" };
      if (offset !== undefined) read.offset = offset;
      if (limit !== undefined) read.limit = limit;
      const result = await sandbox.readFile(path, read);
      let summary = result.binary
        ? `${result.path} is a binary file of ${result.totalBytes} bytes; its content is not shown`
        : `Read ${result.bytesRead} of ${result.totalBytes} bytes of ${result.path}`;
      if (result.truncated) summary += `; truncated, continue at offset ${result.nextOffset}`;
      return okResult(summary, result);
    },
  }) as Tool;
}
