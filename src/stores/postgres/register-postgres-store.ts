import { z } from "zod";
import { type PluginDefinition, registerBuiltin } from "../../plugins/plugin-registry.js";
import type { SessionManager } from "../../sessions/session-manager.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";

/** Config of the `postgres` session store. */
export const postgresStoreConfig = builtOnFirstUse(() =>
  z.object({
    /** Default: `$PGURL`, then `$DATABASE_URL`, then `postgres://127.0.0.1:5432/test`. */
    connection_string: z.string().min(1).optional(),
    schema: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, "lower-case letters, digits and underscores")
      .default("keel"),
    pool_size: z.number().int().positive().default(10),
    lock_timeout_ms: z.number().int().nonnegative().default(30_000),
  }),
);

const postgresStore: PluginDefinition<SessionManager> = {
  kind: "session",
  type: "postgres",
  get configSchema() {
    return postgresStoreConfig();
  },
  requiresPackage: "pg",
  // The store's modules load when a config names it, not with every runtime.
  async create(config) {
    const parsed = postgresStoreConfig().parse(config);
    const { PostgresSessionManager } = await import("./postgres-session-manager.js");
    // Connect and migrate at startup, so a bad connection string fails config loading, not the first run.
    return PostgresSessionManager.open({
      connectionString: parsed.connection_string,
      schema: parsed.schema,
      poolSize: parsed.pool_size,
      lockTimeoutMs: parsed.lock_timeout_ms,
    });
  },
};

/** Register the `postgres` session store; calling it again changes nothing. */
export function registerPostgresStore(): void {
  registerBuiltin(postgresStore);
}
