import { resolve } from "node:path";
import { z } from "zod";
import { type PluginDefinition, registerBuiltin } from "../../plugins/plugin-registry.js";
import type { SessionManager } from "../../sessions/session-manager.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";
import { DEFAULT_MAX_LINE_BYTES } from "./jsonl-line-limit.js";

/** Config of the `jsonl_file` session manager; `root_dir` resolves against the config's directory. */
export const jsonlFileSessionManagerConfig = builtOnFirstUse(() =>
  z.object({
    root_dir: z.string().min(1),
    fsync: z.boolean().default(false),
    max_line_bytes: z.number().int().positive().default(DEFAULT_MAX_LINE_BYTES),
  }),
);

const jsonlFileSessionManager: PluginDefinition<SessionManager> = {
  kind: "session",
  type: "jsonl_file",
  get configSchema() {
    return jsonlFileSessionManagerConfig();
  },
  // The store's modules load when a config names it, not with every runtime.
  async create(config, context) {
    const { JsonlFileSessionManager } = await import("./jsonl-file-session-manager.js");
    return new JsonlFileSessionManager({
      rootDir: resolve(context.baseDir, config.root_dir as string),
      fsync: config.fsync as boolean,
      maxLineBytes: config.max_line_bytes as number,
    });
  },
};

/** Register the `jsonl_file` session manager; calling it again changes nothing. */
export function registerJsonlStore(): void {
  registerBuiltin(jsonlFileSessionManager);
}
