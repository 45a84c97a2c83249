import { userInfo } from "node:os";

/** The connection string used when neither the options nor PGURL / DATABASE_URL give one. */
export const DEFAULT_POSTGRES_URL = "postgres://127.0.0.1:5432/test";

/**
 * The connection string to use: `explicit`, else `$PGURL`, else `$DATABASE_URL`, else
 * {@link DEFAULT_POSTGRES_URL}. When it names no user and neither PGUSER nor USER is set, the OS user is filled
 * in: libpq (psql) does that, but pg would send no user at all and the server would refuse the connection.
 */
export function resolveConnectionString(explicit?: string): string {
  const connectionString = explicit ?? process.env.PGURL ?? process.env.DATABASE_URL ?? DEFAULT_POSTGRES_URL;
  if (process.env.PGUSER || process.env.USER) return connectionString;
  try {
    const url = new URL(connectionString);
    if (url.username !== "") return connectionString;
    url.username = userInfo().username;
    return url.toString();
  } catch {
    // Key-value form: pg reads `user=` from it; leave it as given.
    return connectionString;
  }
}
