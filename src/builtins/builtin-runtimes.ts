import { z } from "zod";
import { DefaultRuntime } from "../loop/runtime-plugin.js";
import { registerBuiltin } from "../plugins/plugin-registry.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";

const defaultRuntimeConfig = builtOnFirstUse(() => z.object({}).loose());

/** Register the `default` runtime. */
export function registerRuntimeBuiltins(): void {
  registerBuiltin({
    kind: "runtime",
    type: "default",
    get configSchema() {
      return defaultRuntimeConfig();
    },
    create: () => new DefaultRuntime(),
  });
}
