import { z } from "zod";
import { PluginConfigError } from "../errors/error-classes.js";
import { getLogger } from "../logging/logger.js";

/**
 * Validate a plugin's `config` with its own schema: unknown keys are warned about and dropped, invalid
 * values are a `PluginConfigError` that names the plugin, the key and what was expected.
 */
export function parsePluginConfig<S extends z.ZodType>(
  schema: S,
  config: unknown,
  plugin: { kind: string; type: string },
): z.output<S> {
  const input = config ?? {};
  if (schema instanceof z.ZodObject && typeof input === "object" && input !== null && !Array.isArray(input)) {
    const known = Object.keys(schema.shape);
    for (const key of Object.keys(input)) {
      if (!known.includes(key)) {
        getLogger().warn(
          `${plugin.kind} "${plugin.type}": unknown config key "${key}" is ignored (known keys: ${known.join(", ") || "none"})`,
        );
      }
    }
  }
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.length ? issue.path.join(".") : "config";
  throw new PluginConfigError(
    `${plugin.kind} "${plugin.type}": invalid config at ${path}: ${issue?.message}`,
    {
      hint: `Fix "${path}" in the plugin's config; every issue: ${parsed.error.issues
        .map((entry) => `${entry.path.join(".") || "config"}: ${entry.message}`)
        .join("; ")}`,
    },
  );
}
