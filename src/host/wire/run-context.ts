import { z } from "zod";
import type { RunTraceContext } from "../../contracts/run-types.js";

/**
 * The one context a runner receives per run: the current event and nothing of the history before it, the
 * resources this run was granted, which pull APIs it may use, a snapshot of host-owned state, and the deadline.
 * Every object keeps fields it does not know (the context is read leniently on both ends), so a host on a newer
 * text can add fields without breaking Keel's runner.
 */

const record = () => z.record(z.string(), z.unknown());
const nullableString = () => z.string().nullish();
const nullableInt = () => z.number().int().nullish();

export const TRIGGER_SOURCES = ["platform", "webui", "api", "scheduler", "system", "host_adapter"] as const;

export const AgentTriggerSchema = z.looseObject({
  type: z.string(),
  source: z.enum(TRIGGER_SOURCES).default("host_adapter"),
  timestamp: nullableInt(),
});

export const RawEventRefSchema = z.looseObject({
  artifact_id: nullableString(),
  ref_id: nullableString(),
  storage_key: nullableString(),
});

export const AgentEventContextSchema = z.looseObject({
  event_id: z.string(),
  event_type: z.string(),
  event_time: nullableInt(),
  source: z.string(),
  source_event_type: nullableString(),
  raw_ref: RawEventRefSchema.nullish(),
  data: record().default({}),
});
export type AgentEventContext = z.infer<typeof AgentEventContextSchema>;

export const ConversationContextSchema = z.looseObject({
  conversation_id: nullableString(),
  thread_id: nullableString(),
  launcher_type: nullableString(),
  launcher_id: nullableString(),
  sender_id: nullableString(),
  bot_id: nullableString(),
  workspace_id: nullableString(),
  session_id: nullableString(),
});
export type ConversationContext = z.infer<typeof ConversationContextSchema>;

export const ActorContextSchema = z.looseObject({
  actor_type: z.string(),
  actor_id: nullableString(),
  actor_name: nullableString(),
  metadata: record().default({}),
});
export type ActorContext = z.infer<typeof ActorContextSchema>;

export const SubjectContextSchema = z.looseObject({
  subject_type: z.string(),
  subject_id: nullableString(),
  data: record().default({}),
});
export type SubjectContext = z.infer<typeof SubjectContextSchema>;

export const ContentElementSchema = z.looseObject({
  type: z.string(),
  text: nullableString(),
  image_url: z.looseObject({ url: z.string() }).nullish(),
  image_base64: nullableString(),
  file_url: nullableString(),
  file_name: nullableString(),
  file_base64: nullableString(),
});
export type ContentElement = z.infer<typeof ContentElementSchema>;

/** An attachment is a reference to an artifact the host holds, never its bytes. */
export const ArtifactRefSchema = z.looseObject({
  artifact_id: nullableString(),
  artifact_type: nullableString(),
  mime_type: nullableString(),
  size: nullableInt(),
  name: nullableString(),
});
export type ArtifactRef = z.infer<typeof ArtifactRefSchema>;

export const AgentInputSchema = z.looseObject({
  text: nullableString(),
  contents: z.array(ContentElementSchema).default([]),
  attachments: z.array(ArtifactRefSchema).default([]),
  message_chain: record().nullish(),
  /** The user's answer to an interaction, in a run started by `interaction.submitted`. */
  interaction: record().nullish(),
});
export type AgentInput = z.infer<typeof AgentInputSchema>;

export const DeliveryContextSchema = z.looseObject({
  surface: z.string(),
  reply_target: record().nullish(),
  supports_streaming: z.boolean().default(false),
  supports_edit: z.boolean().default(false),
  supports_reaction: z.boolean().default(false),
  max_message_size: nullableInt(),
  platform_capabilities: record().default({}),
});
export type DeliveryContext = z.infer<typeof DeliveryContextSchema>;

export const ModelResourceSchema = z.looseObject({
  model_id: z.string(),
  model_type: nullableString(),
  provider: nullableString(),
});
export const ToolResourceSchema = z.looseObject({
  tool_name: z.string(),
  tool_type: nullableString(),
  description: nullableString(),
  parameters: record().nullish(),
});
export const KnowledgeBaseResourceSchema = z.looseObject({
  kb_id: z.string(),
  kb_name: nullableString(),
  kb_type: nullableString(),
});
export const FileResourceSchema = z.looseObject({
  file_id: z.string(),
  file_name: nullableString(),
  mime_type: nullableString(),
  source: nullableString(),
});
export const StorageResourceSchema = z.looseObject({
  plugin_storage: z.boolean().default(false),
  workspace_storage: z.boolean().default(false),
});

export const AgentResourcesSchema = z.looseObject({
  models: z.array(ModelResourceSchema).default([]),
  tools: z.array(ToolResourceSchema).default([]),
  knowledge_bases: z.array(KnowledgeBaseResourceSchema).default([]),
  files: z.array(FileResourceSchema).default([]),
  storage: StorageResourceSchema.default({ plugin_storage: false, workspace_storage: false }),
  platform_capabilities: record().default({}),
});
export type AgentResources = z.infer<typeof AgentResourcesSchema>;
export type ModelResource = z.infer<typeof ModelResourceSchema>;
export type ToolResource = z.infer<typeof ToolResourceSchema>;

export const INLINE_MODES = ["none", "current_event", "recent_tail", "summary_tail"] as const;

export const InlineContextPolicySchema = z.looseObject({
  mode: z.enum(INLINE_MODES).default("current_event"),
  delivered_count: z.number().int().default(0),
  source_total_count: nullableInt(),
  messages_complete: z.boolean().default(false),
  reason: nullableString(),
});

export const ContextApiCapabilitiesSchema = z.looseObject({
  history_page: z.boolean().default(false),
  history_search: z.boolean().default(false),
  event_get: z.boolean().default(false),
  event_page: z.boolean().default(false),
  artifact_metadata: z.boolean().default(false),
  artifact_read: z.boolean().default(false),
  state: z.boolean().default(false),
  storage: z.boolean().default(false),
  // The newer text's pulls: the host's prompt, follow-up input, and the run ledger.
  prompt_get: z.boolean().default(false),
  steering_pull: z.boolean().default(false),
  run_get: z.boolean().default(false),
  run_list: z.boolean().default(false),
  run_events_page: z.boolean().default(false),
  run_cancel: z.boolean().default(false),
  run_append_result: z.boolean().default(false),
  run_finalize: z.boolean().default(false),
});
export type ContextApiCapabilities = z.infer<typeof ContextApiCapabilitiesSchema>;

export const ContextAccessSchema = z.looseObject({
  conversation_id: nullableString(),
  thread_id: nullableString(),
  latest_cursor: nullableString(),
  event_seq: nullableInt(),
  transcript_seq: nullableInt(),
  has_history_before: z.boolean().default(false),
  inline_policy: InlineContextPolicySchema.default(InlineContextPolicySchema.parse({})),
  available_apis: ContextApiCapabilitiesSchema.default(ContextApiCapabilitiesSchema.parse({})),
});
export type ContextAccess = z.infer<typeof ContextAccessSchema>;

export const StaticContextRefSchema = z.looseObject({
  ref: nullableString(),
  version: nullableString(),
  hash: nullableString(),
});

export const AgentRuntimeContextSchema = z.looseObject({
  host: z.string().default("langbot"),
  protocol_version: z.string().default("1"),
  langbot_version: nullableString(),
  trace_id: nullableString(),
  /** Unix epoch seconds. */
  deadline_at: z.number().nullish(),
  locale: nullableString(),
  timezone: nullableString(),
  static_refs: z.record(z.string(), StaticContextRefSchema).default({}),
  metadata: record().default({}),
});
export type AgentRuntimeContext = z.infer<typeof AgentRuntimeContextSchema>;

export const STATE_SCOPES = ["conversation", "actor", "subject", "runner"] as const;
export const StateScopeSchema = z.enum(STATE_SCOPES);
export type StateScope = z.infer<typeof StateScopeSchema>;

export const AgentRunStateSchema = z.looseObject({
  conversation: record().default({}),
  actor: record().default({}),
  subject: record().default({}),
  runner: record().default({}),
});
export type AgentRunState = z.infer<typeof AgentRunStateSchema>;

export const AgentRunContextSchema = z.looseObject({
  run_id: z.string().min(1),
  trigger: AgentTriggerSchema,
  event: AgentEventContextSchema,
  conversation: ConversationContextSchema.nullish(),
  actor: ActorContextSchema.nullish(),
  subject: SubjectContextSchema.nullish(),
  input: AgentInputSchema,
  delivery: DeliveryContextSchema,
  resources: AgentResourcesSchema,
  context: ContextAccessSchema.default(ContextAccessSchema.parse({})),
  state: AgentRunStateSchema.default(AgentRunStateSchema.parse({})),
  runtime: AgentRuntimeContextSchema,
  config: record().default({}),
  adapter: z.looseObject({ extra: record().default({}) }).nullish(),
  metadata: record().default({}),
});
/** The context of one run, as the runner reads it. */
export type AgentRunContext = z.infer<typeof AgentRunContextSchema>;
/** A context as a host writes it: fields with defaults may be left out. */
export type AgentRunContextInput = z.input<typeof AgentRunContextSchema>;

/**
 * The host's trace context, as the run context carries it: W3C `traceparent` and `tracestate` in
 * `runtime.metadata`, the object LangBot's model keeps for host and runtime observability, so a LangBot runner
 * reads the context unchanged and a Keel runner's run joins the host's trace.
 */
export function traceMetadataOf(traceContext: RunTraceContext | undefined): Record<string, string> {
  if (traceContext === undefined) return {};
  const { traceparent, tracestate } = traceContext;
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/** The trace context a run context carries in `runtime.metadata`, or undefined when it carries none. */
export function traceContextOfRun(context: AgentRunContext): RunTraceContext | undefined {
  const { traceparent, tracestate } = context.runtime.metadata;
  if (typeof traceparent !== "string" || traceparent === "") return undefined;
  return typeof tracestate === "string" && tracestate !== "" ? { traceparent, tracestate } : { traceparent };
}
