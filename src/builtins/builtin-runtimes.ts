import { z } from "zod";
import { DefaultRuntime } from "../loop/runtime-plugin.js";
import { registerBuiltin } from "../plugins/plugin-registry.js";

/** Register the `default` runtime. */
export function registerRuntimeBuiltins(): void {
  registerBuiltin({
    kind: "runtime",
    type: "default",
    configSchema: z.object({}).loose(),
    create: () => new DefaultRuntime(),
  });
}
