import { z } from "zod";

/**
 * What a runner declares about itself in discovery: its capabilities (hints), its permissions (the most it may
 * ever be granted) and its context policy. Defaults follow the protocol: a manifest that names only `id`, `name`
 * and `label` is a valid, maximally restricted runner. Unknown optional fields are dropped, so a newer runtime's
 * additions never make a manifest invalid; an unknown operation inside a permission list does.
 */

/** Labels and descriptions are keyed by locale (`en_US`, `zh_Hans`, …). */
export const I18nTextSchema = z.record(z.string(), z.string());
export type I18nText = z.infer<typeof I18nTextSchema>;

export const AgentRunnerCapabilitiesSchema = z.object({
  streaming: z.boolean().default(false),
  tool_calling: z.boolean().default(false),
  knowledge_retrieval: z.boolean().default(false),
  multimodal_input: z.boolean().default(false),
  event_context: z.boolean().default(true),
  platform_api: z.boolean().default(false),
  interrupt: z.boolean().default(false),
  stateful_session: z.boolean().default(false),
  self_managed_context: z.boolean().default(true),
  // Added by the newer protocol text; read so a newer runtime's manifest keeps them.
  skill_authoring: z.boolean().default(false),
  steering: z.boolean().default(false),
  interactions: z.boolean().default(false),
});
export type AgentRunnerCapabilities = z.infer<typeof AgentRunnerCapabilitiesSchema>;

const operations = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.array(z.enum(values)).default([]);

export const AgentRunnerPermissionsSchema = z.object({
  models: operations(["invoke", "stream", "rerank", "count_tokens"]),
  tools: operations(["detail", "call"]),
  knowledge_bases: operations(["list", "retrieve"]),
  history: operations(["page", "search"]),
  events: operations(["get", "page"]),
  artifacts: operations(["metadata", "read"]),
  storage: operations(["plugin", "workspace", "binding"]),
  files: operations(["config", "knowledge"]),
  platform_api: z.array(z.string()).default([]),
  interactions: operations(["request"]),
});
export type AgentRunnerPermissions = z.infer<typeof AgentRunnerPermissionsSchema>;
/** A permission category: `models`, `history`, … */
export type PermissionCategory = keyof AgentRunnerPermissions;

export const AgentRunnerContextPolicySchema = z.object({
  supports_history_pull: z.boolean().default(true),
  supports_history_search: z.boolean().default(false),
  supports_artifact_pull: z.boolean().default(true),
  owns_compaction: z.boolean().default(true),
  wants_static_context_refs: z.boolean().default(true),
});
export type AgentRunnerContextPolicy = z.infer<typeof AgentRunnerContextPolicySchema>;

/** One field of the form a binding fills in to configure the runner. */
export const DynamicFormItemSchema = z.looseObject({
  type: z.string(),
  name: z.string(),
  label: I18nTextSchema.optional(),
  description: I18nTextSchema.nullish(),
  required: z.boolean().default(false),
  default: z.unknown().optional(),
  options: z.array(z.record(z.string(), z.unknown())).nullish(),
});
export type DynamicFormItem = z.infer<typeof DynamicFormItemSchema>;

/** `plugin:author/name/runner`, each part non-empty and free of `/`. */
export const RUNNER_ID_PATTERN = /^plugin:([^/\s]+)\/([^/\s]+)\/([^/\s]+)$/;

/** The protocol major version Keel speaks. */
export const PROTOCOL_VERSION = "1";

export const AgentRunnerManifestSchema = z.object({
  id: z.string().regex(RUNNER_ID_PATTERN, "runner id must be plugin:author/name/runner"),
  name: z.string().min(1),
  label: I18nTextSchema,
  description: I18nTextSchema.nullish(),
  protocol_version: z.string().default(PROTOCOL_VERSION),
  capabilities: AgentRunnerCapabilitiesSchema.default(AgentRunnerCapabilitiesSchema.parse({})),
  permissions: AgentRunnerPermissionsSchema.default(AgentRunnerPermissionsSchema.parse({})),
  context: AgentRunnerContextPolicySchema.default(AgentRunnerContextPolicySchema.parse({})),
  config_schema: z.array(DynamicFormItemSchema).default([]),
  metadata: z.record(z.string(), z.unknown()).default({}),
});
export type AgentRunnerManifest = z.infer<typeof AgentRunnerManifestSchema>;
/** A manifest as an author writes it: everything with a default may be left out. */
export type AgentRunnerManifestInput = z.input<typeof AgentRunnerManifestSchema>;

/** The parts of a runner id. */
export interface RunnerAddress {
  pluginAuthor: string;
  pluginName: string;
  runnerName: string;
}

/** Splits `plugin:author/name/runner`; anything else is `null`, never a guess. */
export function parseRunnerId(id: string): RunnerAddress | null {
  const match = RUNNER_ID_PATTERN.exec(id);
  if (!match) return null;
  return { pluginAuthor: match[1]!, pluginName: match[2]!, runnerName: match[3]! };
}

export function formatRunnerId(address: RunnerAddress): string {
  return `plugin:${address.pluginAuthor}/${address.pluginName}/${address.runnerName}`;
}

/**
 * Whether a manifest's `protocol_version` is one Keel speaks: the same major version. A newer runtime that sends
 * no version at all speaks v1 by the newer text's rule of field-level compatibility.
 */
export function isCompatibleProtocolVersion(version: string | undefined): boolean {
  if (version === undefined) return true;
  return version.trim().split(".")[0] === PROTOCOL_VERSION;
}

/** One runner in the answer to `list_agent_runners`: where it lives and what it declares. */
export interface ListedRunner {
  plugin_author: string;
  plugin_name: string;
  runner_name: string;
  manifest: AgentRunnerManifest;
}
