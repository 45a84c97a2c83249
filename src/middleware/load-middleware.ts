import {
  isMiddleware,
  MIDDLEWARE_LEVELS,
  type Middleware,
  type MiddlewareLevel,
} from "../contracts/middleware.js";
import { PluginLoadError } from "../errors/error-classes.js";
import { isPluginRef, loadPlugin } from "../plugins/load-plugin.js";
import { MiddlewareChain, type MiddlewareStack, NO_MIDDLEWARE } from "./middleware-chain.js";

/** An agent's `middleware` config: entries by level, each a ref or middleware given in code. */
export type MiddlewareEntries = Partial<Record<MiddlewareLevel, readonly unknown[] | undefined>>;

export interface LoadMiddlewareOptions {
  baseDir: string;
  /** Where the entries are, for messages: `agents[a]`. */
  label: string;
  runtime?: unknown;
}

/**
 * An agent's `middleware` config as composed chains. Each entry is middleware given in code, a registered
 * `type` (its factory gets the ref's `config`) or an `impl` export: a `(ctx, next)` function or an object with
 * `process` used as it is, or a class constructed with the ref's `config`.
 */
export async function loadMiddleware(
  config: MiddlewareEntries | undefined,
  options: LoadMiddlewareOptions,
): Promise<MiddlewareStack> {
  if (config === undefined || MIDDLEWARE_LEVELS.every((level) => (config[level]?.length ?? 0) === 0))
    return NO_MIDDLEWARE;
  const chains: Record<string, MiddlewareChain<unknown>> = {};
  for (const level of MIDDLEWARE_LEVELS) {
    const loaded: Middleware<unknown>[] = [];
    for (const [index, entry] of (config[level] ?? []).entries()) {
      const label = `${options.label}.middleware.${level}[${index}]`;
      const value = isPluginRef(entry)
        ? await loadPlugin("middleware", entry, { baseDir: options.baseDir, label, runtime: options.runtime })
        : entry;
      if (!isMiddleware(value)) {
        throw new PluginLoadError(`${label}: not middleware`, {
          hint: "Middleware is a (ctx, next) function or an object with process(ctx, next)",
        });
      }
      loaded.push(value as Middleware<unknown>);
    }
    chains[level] = new MiddlewareChain(loaded);
  }
  return chains as unknown as MiddlewareStack;
}
