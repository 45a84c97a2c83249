import type { Pool } from "pg";
import { importOptionalPackage } from "../../errors/import-optional-package.js";

/** The part of the `pg` module the store uses. */
export interface PgModule {
  Pool: new (config: Record<string, unknown>) => Pool;
}

/**
 * Import the optional `pg` package on first use, so `keel/stores/postgres` imports without it; its absence is a
 * `PluginLoadError` that says how to install it.
 */
export async function importPg(specifier = "pg"): Promise<PgModule> {
  const module = await importOptionalPackage<{ default?: PgModule } & Partial<PgModule>>(specifier, {
    neededBy: 'session store "postgres"',
  });
  // pg is CommonJS: its classes sit on `default`, and on the namespace only where Node could detect them.
  return (module.default ?? module) as PgModule;
}
