import { z } from "zod";
import type { Tool, ToolResult } from "../../contracts/tool.js";
import type { ListEntry } from "../../sandbox/directory-entries.js";
import type { SandboxProvider } from "../../sandbox/sandbox-provider.js";
import { defineTool } from "../../tools/define-tool.js";
import { okResult } from "./tool-result.js";

export interface ListFilesData {
  path: string;
  entries: ListEntry[];
  truncated: boolean;
}

/** `list_files(path, recursive?)`: entries with type and size, at most `max_list_entries`. */
export function createListFilesTool(options: { sandbox: SandboxProvider; maxListEntries: number }): Tool {
  return defineTool({
    name: "list_files",
    description:
      "List a directory of the workspace: each entry's path, type (file, directory, symlink, other) and size. " +
      `At most ${options.maxListEntries} entries; 'truncated' says when there were more. Symlinks are not followed.`,
    inputSchema: z.object({
      path: z.string().optional().describe("Directory relative to the workspace (default '.')"),
      recursive: z.boolean().optional().describe("Also list subdirectories (default false)"),
    }),
    readsFiles: true,
    sideEffects: "read",
    concurrencySafe: true,
    execute: async ({ path, recursive }, ctx): Promise<ToolResult<ListFilesData>> => {
      const sandbox = await options.sandbox(ctx);
      const result = await sandbox.listDirectory(path ?? ".", {
        tool: "list_files",
        recursive: recursive ?? false,
      });
      const count = `${result.entries.length} ${result.entries.length === 1 ? "entry" : "entries"}`;
      return okResult(
        `${count} in ${result.path}${result.truncated ? " (truncated: there are more)" : ""}`,
        result,
      );
    },
  }) as Tool;
}
