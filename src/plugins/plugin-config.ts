import { z } from "zod";
import { nearMatch } from "../config/near-match.js";
import { PluginConfigError } from "../errors/error-classes.js";
import { getLogger } from "../logging/logger.js";

/**
 * Validate a plugin's `config` with its own schema: unknown keys are warned about and dropped, invalid
 * values are a `PluginConfigError` that names the plugin, the key and what was expected. An unknown key that
 * is a near miss of a required key the config lacks (`path` for `db_path`) is that error, with the key meant.
 */
export function parsePluginConfig<S extends z.ZodType>(
  schema: S,
  config: unknown,
  plugin: { kind: string; type: string },
): z.output<S> {
  const input = config ?? {};
  const known =
    schema instanceof z.ZodObject && typeof input === "object" && input !== null && !Array.isArray(input)
      ? Object.keys(schema.shape)
      : undefined;
  const unknown = known === undefined ? [] : Object.keys(input).filter((key) => !known.includes(key));
  // Parsed once per plugin: zod's compiled fast path would cost more than it saves.
  const parsed = schema.safeParse(input, { jitless: true });
  if (!parsed.success && known !== undefined) {
    const given = input as Record<string, unknown>;
    for (const issue of parsed.error.issues) {
      const missing = issue.path.length === 1 ? String(issue.path[0]) : undefined;
      if (missing === undefined || given[missing] !== undefined) continue;
      const typo = unknown.find((key) => nearMatch(key, known) === missing);
      if (typo === undefined) continue;
      throw new PluginConfigError(
        `${plugin.kind} "${plugin.type}": unknown config key "${typo}"; did you mean "${missing}"?`,
        { hint: `Rename "${typo}" to "${missing}" (known keys: ${known.join(", ")})` },
      );
    }
  }
  for (const key of unknown) {
    getLogger().warn(
      `${plugin.kind} "${plugin.type}": unknown config key "${key}" is ignored (known keys: ${known!.join(", ") || "none"})`,
    );
  }
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
