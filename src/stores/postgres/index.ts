export { migrate, POSTGRES_MIGRATIONS, type PostgresMigration } from "./migrations.js";
export { PostgresSessionManager, type PostgresSessionManagerOptions } from "./postgres-session-manager.js";
export { POSTGRES_STORE_CONFIG, registerPostgresStore } from "./register-postgres-store.js";
export { DEFAULT_POSTGRES_URL, resolveConnectionString } from "./resolve-connection-string.js";
