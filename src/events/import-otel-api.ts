import type * as OtelApi from "@opentelemetry/api";
import { importOptionalPackage } from "../errors/import-optional-package.js";

import { OTEL_API_PACKAGE } from "./otel-api-package.js";

// Apart from the bridge's entry so that Keel's public declarations never name OpenTelemetry's types: a project
// without the package still compiles against them.

/** Import the OpenTelemetry API; a missing package is a `PluginLoadError` naming it. */
export async function importOtelApi(specifier: string = OTEL_API_PACKAGE): Promise<typeof OtelApi> {
  const module = await importOptionalPackage<typeof OtelApi & { default?: typeof OtelApi }>(specifier, {
    neededBy: 'event bus "otel_bridge"',
    packageName: OTEL_API_PACKAGE,
    hint: `npm install ${OTEL_API_PACKAGE} (and an OpenTelemetry SDK to export the spans)`,
  });
  // The API is CommonJS: Node exposes its named exports on the namespace, older loaders only on `default`.
  return module.trace === undefined && module.default !== undefined ? module.default : module;
}
