import type * as OtelApi from "@opentelemetry/api";
import { PluginLoadError } from "../errors/error-classes.js";

import { OTEL_API_PACKAGE } from "./otel-api-package.js";

// Apart from the bridge's entry so that Keel's public declarations never name OpenTelemetry's types: a project
// without the package still compiles against them.

/** Import the OpenTelemetry API; a missing package is a `PluginLoadError` naming it. */
export async function importOtelApi(specifier: string = OTEL_API_PACKAGE): Promise<typeof OtelApi> {
  // A variable specifier keeps TypeScript and bundlers from requiring the optional package at build time.
  let module: typeof OtelApi & { default?: typeof OtelApi };
  try {
    module = await import(specifier);
  } catch (error) {
    throw new PluginLoadError(
      `event bus "otel_bridge" needs the npm package ${OTEL_API_PACKAGE}, which could not be imported`,
      {
        hint: `npm install ${OTEL_API_PACKAGE} (and an OpenTelemetry SDK to export the spans)`,
        cause: error,
      },
    );
  }
  // The API is CommonJS: Node exposes its named exports on the namespace, older loaders only on `default`.
  return module.trace === undefined && module.default !== undefined ? module.default : module;
}
