import { KeelError } from "../../errors/keel-error.js";
import { SESSION_SCHEMA_VERSION } from "../../sessions/session-manager.js";

/** Schema versions of stored rows this build can read. */
export const SQLITE_READABLE_SCHEMA_VERSIONS: ReadonlySet<number> = new Set([SESSION_SCHEMA_VERSION]);

/** Where a row lives, for error messages. */
export interface SqliteRowLocation {
  readonly dbPath: string;
  readonly table: string;
  readonly key: string;
}

/**
 * Check a row's `schema_version` and parse its JSON body. A version this build cannot read is refused with
 * `store.schema_version` rather than handing the run loop a shape it would misread; a body that is not JSON is
 * `store.corrupt`, never skipped.
 */
export function checkSqliteRow<T>(version: unknown, body: unknown, where: SqliteRowLocation): T {
  if (typeof version !== "number" || !SQLITE_READABLE_SCHEMA_VERSIONS.has(version)) {
    const readable = [...SQLITE_READABLE_SCHEMA_VERSIONS].join(", ");
    throw new KeelError(
      `sqlite store: ${where.table} row "${where.key}" has schema version ${String(version)}; this Keel reads ${readable}`,
      {
        code: "store.schema_version",
        hint:
          typeof version === "number" && version > SESSION_SCHEMA_VERSION
            ? "A newer Keel wrote this row; upgrade Keel to read it."
            : "This row's version is not one this Keel can read; migrate it with the Keel release that wrote it.",
        context: { ...where, version },
      },
    );
  }
  try {
    if (typeof body !== "string") throw new TypeError(`expected JSON text, found ${typeof body}`);
    return JSON.parse(body) as T;
  } catch (error) {
    throw new KeelError(
      `sqlite store: ${where.table} row "${where.key}" in ${where.dbPath} is not valid JSON`,
      {
        code: "store.corrupt",
        cause: error,
        hint: "The row was damaged outside Keel; restore the database from a backup or delete the row by hand.",
        context: { ...where },
      },
    );
  }
}
