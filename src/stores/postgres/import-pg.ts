import type { Pool } from "pg";
import { PluginLoadError } from "../../errors/error-classes.js";

/** The part of the `pg` module the store uses. */
export interface PgModule {
  Pool: new (config: Record<string, unknown>) => Pool;
}

/**
 * Import the optional `pg` package on first use, so `keel/stores/postgres` imports without it; its absence is a
 * `PluginLoadError` that says how to install it.
 */
export async function importPg(specifier = "pg"): Promise<PgModule> {
  // A variable specifier keeps TypeScript and bundlers from requiring the optional package at build time.
  let module: { default?: PgModule } & Partial<PgModule>;
  try {
    module = await import(specifier);
  } catch (error) {
    throw new PluginLoadError(
      `session store "postgres" needs the npm package ${specifier}, which could not be imported`,
      { hint: `npm install ${specifier}`, cause: error },
    );
  }
  // pg is CommonJS: its classes sit on `default`, and on the namespace only where Node could detect them.
  return (module.default ?? module) as PgModule;
}
