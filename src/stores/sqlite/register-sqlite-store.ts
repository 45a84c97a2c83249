import { resolve } from "node:path";
import { z } from "zod";
import { type PluginDefinition, registerBuiltin } from "../../plugins/plugin-registry.js";
import type { SessionManager } from "../../sessions/session-manager.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";

/** Config of the `sqlite` session store; `db_path` resolves against the config's directory. */
export const sqliteStoreConfig = builtOnFirstUse(() =>
  z.object({
    db_path: z.string().min(1),
    wal: z.boolean().default(true),
    synchronous: z.enum(["OFF", "NORMAL", "FULL", "EXTRA"]).default("NORMAL"),
    busy_timeout_ms: z.number().int().nonnegative().default(5000),
  }),
);

const sqliteStore: PluginDefinition<SessionManager> = {
  kind: "session",
  type: "sqlite",
  get configSchema() {
    return sqliteStoreConfig();
  },
  // The store's modules load when a config names it, not with every runtime.
  async create(config, context) {
    const parsed = sqliteStoreConfig().parse(config);
    const { SqliteSessionManager } = await import("./sqlite-session-manager.js");
    // Open and migrate at startup, so a missing binding or an unwritable path fails config loading, not a run.
    return SqliteSessionManager.open({
      dbPath: parsed.db_path === ":memory:" ? ":memory:" : resolve(context.baseDir, parsed.db_path),
      wal: parsed.wal,
      synchronous: parsed.synchronous,
      busyTimeoutMs: parsed.busy_timeout_ms,
    });
  },
};

/** Register the `sqlite` session store; calling it again changes nothing. */
export function registerSqliteStore(): void {
  registerBuiltin(sqliteStore);
}
