import type { ActionChannel } from "../transport/action-channel.js";
import type { AgentRunnerManifest, AgentRunnerPermissions } from "../wire/manifest.js";
import type { ContextApiCapabilities, StateScope } from "../wire/run-context.js";
import type { AgentRunResult } from "../wire/run-result.js";
import type { SteeringInputItem } from "../wire/steering-item.js";
import type { AgentBinding, AgentEventEnvelope } from "./agent-binding.js";

/** What a host offers runners: the ids of its models, tools and knowledge bases. */
export interface HostResourceIndex {
  models: ReadonlyMap<string, { model_type?: string; provider?: string }>;
  tools: ReadonlyMap<string, { description?: string; parameters?: Record<string, unknown> }>;
  knowledgeBases: ReadonlyMap<string, { name?: string; type?: string }>;
  /** Files runners may read, with the `files` permission (`config` or `knowledge`) each needs. */
  files?: ReadonlyMap<string, { name?: string; mime_type?: string; kind: "config" | "knowledge" }>;
}

/**
 * The run's authorization, fixed when the run starts: the manifest's permissions ∩ the binding's policy ∩ what
 * the event's actor may use. The context's resources are projected from it and every proxy call is checked
 * against it, never re-derived, so what the runner was told and what it is allowed cannot drift apart.
 */
export interface RunGrant {
  models: Set<string>;
  tools: Set<string>;
  knowledgeBases: Set<string>;
  files: Set<string>;
  pluginStorage: boolean;
  workspaceStorage: boolean;
  /** Conversations whose history and events the run may read: its own, and any the binding adds. */
  conversations: Set<string>;
  /**
   * The thread the run's own conversation is read in: its history, events and artifacts come from this thread
   * only. Null when the run may read the whole conversation — an event outside any thread, or a binding whose
   * `history_scope` is `conversation`. Other granted conversations are read whole.
   */
  historyThread: string | null;
  platformActions: Set<string>;
}

/** A run in flight, as the host's proxy checks calls against it. */
export interface RunSession {
  runId: string;
  runnerId: string;
  /** `author/name` of the plugin that serves the runner: calls for this run must come from it. */
  pluginIdentity: string;
  /** The connection the run was started on; a proxy call for it on another connection is refused. */
  channel: ActionChannel;
  permissions: AgentRunnerPermissions;
  binding: AgentBinding;
  event: AgentEventEnvelope;
  grant: RunGrant;
  stateKeys: Partial<Record<StateScope, string>>;
  /** Unix epoch seconds, or null. */
  deadlineAt: number | null;
  calls: number;
  startedAt: number;
  /** The pulls the run's context offered it; a call to one it was not offered is refused. */
  availableApis: ContextApiCapabilities;
  /** Follow-up input for the run, oldest first, until it pulls it: what the runner gets, and the host's event. */
  steering: { item: SteeringInputItem; event: AgentEventEnvelope }[];
  /** What the proxy may do to the run itself. */
  control: RunControl;
}

/** The run's own stream, as the ledger calls reach it: cancel it, add a result to it, end it. */
export interface RunControl {
  cancel(reason: string | null): void;
  /** Logs an input the run took (a pulled follow-up) as the run's own event was logged. */
  recordInput(event: AgentEventEnvelope): Promise<void>;
  /** Applies a result as if the stream had carried it and delivers it; undefined when it is dropped. */
  append(result: unknown): Promise<AgentRunResult | undefined>;
  /** Ends the run now with the status the runner gives. */
  finalize(status: "completed" | "failed" | "cancelled", reason: string | null): void;
}

/** Config fields whose values name models or knowledge bases the binding selects for the runner. */
const MODEL_SELECTORS = new Set(["llm-model-selector", "model-fallback-selector", "rerank-model-selector"]);
const KB_SELECTORS = new Set(["knowledge-base-multi-selector", "knowledge-base-selector"]);
const FILE_SELECTORS = new Set(["file", "array[file]"]);

export function computeRunGrant(options: {
  manifest: AgentRunnerManifest;
  binding: AgentBinding;
  event: AgentEventEnvelope;
  resources: HostResourceIndex;
  /**
   * After the default run-scope narrowing ({@link narrowToRunScope}), the deployment's own rule for what the
   * event's actor may use.
   */
  authorize?: ((grant: RunGrant, event: AgentEventEnvelope) => RunGrant) | undefined;
}): RunGrant {
  const { manifest, binding, event, resources } = options;
  const { permissions } = manifest;
  const policy = binding.resource_policy;
  const selected = (types: Set<string>) =>
    manifest.config_schema
      .filter((field) => types.has(field.type))
      .flatMap((field) => {
        const value = binding.runner_config[field.name];
        const values = Array.isArray(value) ? value : [value];
        return values.flatMap((item) => {
          if (typeof item === "string") return [item];
          const object = item as { primary?: unknown; fallbacks?: unknown } | null;
          return [object?.primary, ...(Array.isArray(object?.fallbacks) ? object.fallbacks : [])].filter(
            (id): id is string => typeof id === "string",
          );
        });
      });
  const existing = (ids: Iterable<string>, index: ReadonlyMap<string, unknown>) =>
    new Set([...ids].filter((id) => id !== "__none__" && index.has(id)));
  const grant: RunGrant = {
    models:
      permissions.models.length > 0
        ? existing([...selected(MODEL_SELECTORS), ...(policy.allowed_model_uuids ?? [])], resources.models)
        : new Set(),
    tools:
      permissions.tools.length > 0 ? existing(policy.allowed_tool_names ?? [], resources.tools) : new Set(),
    knowledgeBases:
      permissions.knowledge_bases.length > 0
        ? existing([...selected(KB_SELECTORS), ...(policy.allowed_kb_uuids ?? [])], resources.knowledgeBases)
        : new Set(),
    // A file needs the permission of its kind: a config file `config`, a knowledge base's file `knowledge`.
    files: new Set(
      [
        ...existing(
          [...selected(FILE_SELECTORS), ...(policy.allowed_file_ids ?? [])],
          resources.files ?? new Map(),
        ),
      ].filter((id) => (permissions.files as string[]).includes(resources.files!.get(id)!.kind)),
    ),
    pluginStorage: permissions.storage.includes("plugin") && policy.allow_plugin_storage,
    workspaceStorage: permissions.storage.includes("workspace") && policy.allow_workspace_storage,
    conversations: new Set(
      event.conversation_id ? [event.conversation_id, ...policy.extra_history_conversations] : [],
    ),
    historyThread: policy.history_scope === "conversation" ? null : (event.thread_id ?? null),
    platformActions: new Set(
      policy.allowed_platform_actions.filter((action) => permissions.platform_api.includes(action)),
    ),
  };
  const scoped = narrowToRunScope(grant, { manifest, binding, event });
  return options.authorize ? options.authorize(scoped, event) : scoped;
}

/**
 * The third layer's default: what this event may use, whoever the deployment says its actor is (that is the
 * `authorize` hook's part, applied after this).
 *
 * - A binding scoped to a bot or a workspace grants its resources to events of that bot or workspace only; an
 *   event from elsewhere keeps nothing but its own conversation.
 * - History and events: the event's own conversation, and of it only the event's thread when it has one. The
 *   binding's further conversations, and the whole of a thread's conversation, stay only for a runner whose
 *   manifest reads history or events at all — reaching across threads or conversations needs both.
 * - Workspace storage: the event's own workspace's, so an event that names no workspace gets none rather than
 *   an area every such event would share.
 * - Platform actions named `event_*` act on the event's own target (its conversation or reply target); without
 *   one they are dropped. Others stay as the binding whitelists them.
 */
export function narrowToRunScope(
  grant: RunGrant,
  run: { manifest: AgentRunnerManifest; binding: AgentBinding; event: AgentEventEnvelope },
): RunGrant {
  const { manifest, binding, event } = run;
  const own = event.conversation_id ? [event.conversation_id] : [];
  if (!bindingCovers(binding, event)) {
    return {
      models: new Set(),
      tools: new Set(),
      knowledgeBases: new Set(),
      files: new Set(),
      pluginStorage: false,
      workspaceStorage: false,
      conversations: new Set(own),
      historyThread: event.thread_id ?? null,
      platformActions: new Set(),
    };
  }
  const readsAcross = manifest.permissions.history.length > 0 || manifest.permissions.events.length > 0;
  const hasTarget = Boolean(event.conversation_id) || event.delivery.reply_target != null;
  return {
    ...grant,
    conversations: readsAcross
      ? grant.conversations
      : new Set(own.filter((id) => grant.conversations.has(id))),
    historyThread: readsAcross ? grant.historyThread : (event.thread_id ?? null),
    workspaceStorage: grant.workspaceStorage && Boolean(event.workspace_id),
    platformActions: new Set(
      [...grant.platformActions].filter((action) => !action.startsWith("event_") || hasTarget),
    ),
  };
}

/** Whether the event is within the binding's scope: its bot, its workspace, or anywhere. */
function bindingCovers(binding: AgentBinding, event: AgentEventEnvelope): boolean {
  const { scope_type: type, scope_id: id } = binding.scope;
  if (id == null || id === "") return true;
  if (type === "bot") return event.bot_id === id;
  if (type === "workspace") return event.workspace_id === id;
  return true;
}

/** The state keys of a run, one per enabled scope whose identity the event has; runner and binding isolate them. */
export function stateKeysOf(
  runnerId: string,
  binding: AgentBinding,
  event: AgentEventEnvelope,
): Partial<Record<StateScope, string>> {
  const policy = binding.state_policy;
  if (!policy.enable_state) return {};
  const owner = `${runnerId}:${binding.binding_id}`;
  const keys: Partial<Record<StateScope, string>> = {};
  for (const scope of policy.state_scopes) {
    if (scope === "runner") keys.runner = `runner:${owner}`;
    if (scope === "conversation" && event.conversation_id) {
      keys.conversation = `conversation:${owner}:${event.conversation_id}${event.thread_id ? `:${event.thread_id}` : ""}`;
    }
    if (scope === "actor" && event.actor?.actor_id) {
      keys.actor = `actor:${owner}:${event.actor.actor_type || "user"}:${event.actor.actor_id}`;
    }
    if (scope === "subject" && event.subject?.subject_id) {
      keys.subject = `subject:${owner}:${event.subject.subject_type || "unknown"}:${event.subject.subject_id}`;
    }
  }
  return keys;
}
