export { migrate, POSTGRES_MIGRATIONS, type PostgresMigration } from "./migrations.js";
export { PostgresSessionManager, type PostgresSessionManagerOptions } from "./postgres-session-manager.js";

import { postgresStoreConfig } from "./register-postgres-store.js";

export { registerPostgresStore } from "./register-postgres-store.js";

/**
 * The `postgres` store's config schema, built when this entry is imported; the main entry builds it only when a
 * config names the store.
 */
export const POSTGRES_STORE_CONFIG = postgresStoreConfig();
export { DEFAULT_POSTGRES_URL, resolveConnectionString } from "./resolve-connection-string.js";
