import { PluginLoadError } from "./error-classes.js";

/** What needs an optional package, for the error that says it is missing. */
export interface OptionalPackageUse {
  /** The plugin that needs it, as the message names it: `session store "postgres"`. */
  neededBy: string;
  /** The package to name when the specifier is not its name (a subpath, a test's stand-in). */
  packageName?: string;
  /** How to install it (default: `npm install <package>`). */
  hint?: string;
  context?: Record<string, unknown>;
}

/**
 * Import an optional package on first use, so the module that needs it imports without it; its absence is a
 * `PluginLoadError` naming the plugin that needs it and how to install it. The caller picks the module's parts
 * off the namespace (CommonJS packages put them on `default`).
 */
export async function importOptionalPackage<T>(specifier: string, use: OptionalPackageUse): Promise<T> {
  try {
    // A variable specifier keeps TypeScript and bundlers from requiring the optional package at build time.
    return (await import(specifier)) as T;
  } catch (error) {
    const name = use.packageName ?? specifier;
    throw new PluginLoadError(`${use.neededBy} needs the npm package ${name}, which could not be imported`, {
      hint: use.hint ?? `npm install ${name}`,
      cause: error,
      ...(use.context === undefined ? {} : { context: use.context }),
    });
  }
}
