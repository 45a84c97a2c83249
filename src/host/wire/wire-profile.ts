import type { AgentRunnerManifest } from "./manifest.js";
import type { AgentRunResult } from "./run-result.js";

/**
 * Which text of the protocol Keel writes. `seed` (the default) is v1 as first published: `protocol_version`,
 * the context policy, `artifact.created`. `langbot-4.11` is the newer text LangBot's own models follow: no
 * `protocol_version` or context policy in the manifest, only the capabilities and permissions that text names,
 * no `artifact.created`. Keel reads both whatever it writes.
 */
export type WireProfile = "seed" | "langbot-4.11";

const NEWER_CAPABILITIES = [
  "streaming",
  "tool_calling",
  "knowledge_retrieval",
  "multimodal_input",
  "skill_authoring",
  "interrupt",
  "steering",
  "interactions",
] as const;

const NEWER_PERMISSIONS = [
  "models",
  "tools",
  "knowledge_bases",
  "history",
  "events",
  "storage",
  "interactions",
] as const;

/** The manifest as the profile writes it. */
export function manifestForProfile(
  manifest: AgentRunnerManifest,
  profile: WireProfile,
): Record<string, unknown> {
  if (profile === "seed") return { ...manifest };
  const capabilities: Record<string, boolean> = {};
  for (const name of NEWER_CAPABILITIES) capabilities[name] = manifest.capabilities[name];
  const permissions: Record<string, string[]> = {};
  for (const name of NEWER_PERMISSIONS) {
    const granted = manifest.permissions[name] as string[];
    permissions[name] = name === "storage" ? granted.filter((area) => area !== "binding") : [...granted];
  }
  return {
    id: manifest.id,
    name: manifest.name,
    label: manifest.label,
    capabilities,
    permissions,
    config_schema: manifest.config_schema,
    metadata: manifest.metadata,
  };
}

/** Whether the profile has this result type at all; the newer text dropped `artifact.created`. */
export function profileCarriesResult(result: Pick<AgentRunResult, "type">, profile: WireProfile): boolean {
  return !(profile === "langbot-4.11" && result.type === "artifact.created");
}
