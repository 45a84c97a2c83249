import { z } from "zod";
import {
  ActorContextSchema,
  AgentInputSchema,
  DeliveryContextSchema,
  RawEventRefSchema,
  StateScopeSchema,
  SubjectContextSchema,
} from "../wire/run-context.js";

/**
 * Host-side shapes a runner never sees: the binding that says which runner handles which events with what
 * config and within which limits, and the normalised event a run starts from.
 */

export const ResourcePolicySchema = z.object({
  allowed_model_uuids: z.array(z.string()).nullish(),
  allowed_tool_names: z.array(z.string()).nullish(),
  allowed_kb_uuids: z.array(z.string()).nullish(),
  /** Files (config or knowledge files) a runner may read, besides those its config's file fields name. */
  allowed_file_ids: z.array(z.string()).nullish(),
  allow_plugin_storage: z.boolean().default(true),
  allow_workspace_storage: z.boolean().default(false),
  /** Platform actions this binding lets a runner request; each still needs the host's approval. */
  allowed_platform_actions: z.array(z.string()).default([]),
  /** Conversations besides the run's own whose history the runner may read. */
  extra_history_conversations: z.array(z.string()).default([]),
  /**
   * What a run started in a thread may read of its own conversation's history and events: its `thread` (the
   * default), or the whole `conversation` (kept only for a runner whose manifest reads history or events).
   */
  history_scope: z.enum(["thread", "conversation"]).default("thread"),
});
export type ResourcePolicy = z.infer<typeof ResourcePolicySchema>;

export const StatePolicySchema = z.object({
  enable_state: z.boolean().default(true),
  state_scopes: z.array(StateScopeSchema).default(["conversation", "actor"]),
});
export type StatePolicy = z.infer<typeof StatePolicySchema>;

export const DeliveryPolicySchema = z.object({
  enable_streaming: z.boolean().default(true),
  enable_reply: z.boolean().default(true),
  max_message_size: z.number().int().positive().nullish(),
});

export const PromptMessageSchema = z.looseObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]),
});

export const AgentBindingSchema = z.object({
  binding_id: z.string().min(1),
  enabled: z.boolean().default(true),
  scope: z
    .object({ scope_type: z.enum(["agent", "bot", "workspace", "global"]), scope_id: z.string().nullish() })
    .default({ scope_type: "global" }),
  event_types: z.array(z.string()).default(["message.received"]),
  runner_id: z.string(),
  /** The runner's config (`ctx.config`); `timeout` (seconds) sets the run's deadline, 300 by default. */
  runner_config: z.record(z.string(), z.unknown()).default({}),
  resource_policy: ResourcePolicySchema.default(ResourcePolicySchema.parse({})),
  state_policy: StatePolicySchema.default(StatePolicySchema.parse({})),
  delivery_policy: DeliveryPolicySchema.default(DeliveryPolicySchema.parse({})),
  /**
   * The host's prompt for the runner (`get_prompt`): messages `{role, content}`, or one text that becomes a
   * system message. A runner whose host has none falls back to its own.
   */
  prompt: z
    .union([z.string().min(1), z.array(PromptMessageSchema)])
    .transform((prompt) => (typeof prompt === "string" ? [{ role: "system", content: prompt }] : prompt))
    .nullish(),
});
/** Which runner handles which events, with what config and within which limits. */
export type AgentBinding = z.infer<typeof AgentBindingSchema>;
export type AgentBindingInput = z.input<typeof AgentBindingSchema>;

export const AgentEventEnvelopeSchema = z.object({
  event_id: z.string().min(1),
  event_type: z.string().min(1),
  /** Unix epoch seconds. */
  event_time: z.number().int().nullish(),
  source: z.string().default("api"),
  source_event_type: z.string().nullish(),
  bot_id: z.string().nullish(),
  workspace_id: z.string().nullish(),
  conversation_id: z.string().nullish(),
  thread_id: z.string().nullish(),
  actor: ActorContextSchema.nullish(),
  subject: SubjectContextSchema.nullish(),
  input: AgentInputSchema.default(AgentInputSchema.parse({})),
  delivery: DeliveryContextSchema.default(DeliveryContextSchema.parse({ surface: "api" })),
  raw_ref: RawEventRefSchema.nullish(),
  data: z.record(z.string(), z.unknown()).default({}),
});
/** An event as the host received and normalised it; a run starts from one. */
export type AgentEventEnvelope = z.infer<typeof AgentEventEnvelopeSchema>;
export type AgentEventEnvelopeInput = z.input<typeof AgentEventEnvelopeSchema>;
