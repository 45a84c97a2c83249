import { KeelError } from "../../errors/keel-error.js";
import { SESSION_SCHEMA_VERSION } from "../../sessions/session-manager.js";

/** Schema versions of stored rows this build can read. */
export const READABLE_SCHEMA_VERSIONS: ReadonlySet<number> = new Set([SESSION_SCHEMA_VERSION]);

/**
 * Refuse a row whose `schema_version` this build cannot read with `store.schema_version`, rather than hand the
 * run loop a shape it would misread.
 */
export function checkSchemaVersion(
  version: number,
  where: { schema: string; table: string; key: string },
): void {
  if (READABLE_SCHEMA_VERSIONS.has(version)) return;
  const readable = [...READABLE_SCHEMA_VERSIONS].join(", ");
  throw new KeelError(
    `postgres store: ${where.table} row "${where.key}" has schema version ${version}; this Keel reads ${readable}`,
    {
      code: "store.schema_version",
      hint:
        version > SESSION_SCHEMA_VERSION
          ? "A newer Keel wrote this row; upgrade Keel to read it."
          : "This row predates the versions this Keel can read; migrate it with the Keel release that wrote it.",
      context: { ...where, version },
    },
  );
}
