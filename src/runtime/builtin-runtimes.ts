import { z } from "zod";
import { registerBuiltin } from "../plugins/plugin-registry.js";
import { DefaultRuntime } from "./runtime-plugin.js";

/** Register the `default` runtime. */
export function registerRuntimeBuiltins(): void {
  registerBuiltin({
    kind: "runtime",
    type: "default",
    configSchema: z.object({}).loose(),
    create: () => new DefaultRuntime(),
  });
}
