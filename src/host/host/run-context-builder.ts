import type { RunTraceContext } from "../../contracts/run-types.js";
import type { AgentRunnerManifest } from "../wire/manifest.js";
import { nowSeconds } from "../wire/now-seconds.js";
import {
  type AgentRunContextInput,
  type AgentRunState,
  type ContextApiCapabilities,
  type StateScope,
  traceMetadataOf,
} from "../wire/run-context.js";
import type { AgentBinding, AgentEventEnvelope } from "./agent-binding.js";
import type { HostStores } from "./host-stores.js";
import type { HostResourceIndex, RunGrant } from "./run-session.js";

/** The default time a run may take, in seconds, when the binding's `runner_config.timeout` does not say. */
export const DEFAULT_RUN_TIMEOUT_SECONDS = 300;

/** `deadline_at` for a run starting now: the binding's timeout in seconds (300 by default); ≤ 0 or invalid is none. */
export function deadlineOf(binding: AgentBinding, nowSeconds: number): number | null {
  const timeout = binding.runner_config.timeout ?? DEFAULT_RUN_TIMEOUT_SECONDS;
  if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0) return null;
  return nowSeconds + timeout;
}

/**
 * The context of one run, event first: the current event and its input inlined, never history — the runner
 * pulls that through the proxy when its context policy wants it, and `context.available_apis` says which pulls
 * this run may make. Resources are the run's grant; state is a snapshot of the enabled scopes.
 */
export async function buildRunContext(options: {
  runId: string;
  event: AgentEventEnvelope;
  binding: AgentBinding;
  manifest: AgentRunnerManifest;
  grant: RunGrant;
  resources: HostResourceIndex;
  stateKeys: Partial<Record<StateScope, string>>;
  stores: HostStores;
  deadlineAt: number | null;
  hostVersion: string;
  /** The trace the run joins, sent in `runtime.metadata`. */
  traceContext?: RunTraceContext | undefined;
}): Promise<AgentRunContextInput> {
  const { runId, event, binding, manifest, grant, resources, stores } = options;
  const conversationId = event.conversation_id ?? null;
  // The cursor of what the run may page: its thread's newest item when its grant keeps it to the thread.
  const thread = options.grant.historyThread ?? undefined;
  const latestSeq = conversationId ? await stores.transcript.latestSeq(conversationId, thread) : null;
  const state: AgentRunState = { conversation: {}, actor: {}, subject: {}, runner: {} };
  for (const [scope, key] of Object.entries(options.stateKeys) as [StateScope, string][]) {
    state[scope] = await stores.state.snapshot(key);
  }
  // As LangBot's host does: an enabled conversation scope names its conversation until the runner says otherwise,
  // which also tells a runner that the scope is kept for it.
  if (
    options.stateKeys.conversation &&
    conversationId &&
    state.conversation["external.conversation_id"] === undefined
  )
    state.conversation["external.conversation_id"] = conversationId;
  const delivery = { ...event.delivery };
  if (!binding.delivery_policy.enable_streaming) delivery.supports_streaming = false;
  if (binding.delivery_policy.max_message_size != null)
    delivery.max_message_size = binding.delivery_policy.max_message_size;
  return {
    run_id: runId,
    trigger: {
      type: event.event_type,
      source: triggerSource(event.source),
      timestamp: event.event_time ?? nowSeconds(),
    },
    event: eventContextOf(event),
    conversation: conversationContextOf(event),
    actor: event.actor ?? null,
    subject: event.subject ?? null,
    input: event.input,
    delivery,
    resources: {
      models: [...grant.models].map((id) => ({ model_id: id, ...resources.models.get(id) })),
      tools: [...grant.tools].map((name) => {
        const tool = resources.tools.get(name);
        return {
          tool_name: name,
          description: tool?.description ?? null,
          parameters: tool?.parameters ?? null,
        };
      }),
      knowledge_bases: [...grant.knowledgeBases].map((id) => ({
        kb_id: id,
        kb_name: resources.knowledgeBases.get(id)?.name ?? null,
        kb_type: resources.knowledgeBases.get(id)?.type ?? null,
      })),
      files: [...grant.files].map((id) => {
        const file = resources.files?.get(id);
        return {
          file_id: id,
          file_name: file?.name ?? null,
          mime_type: file?.mime_type ?? null,
          source: file?.kind ?? null,
        };
      }),
      storage: { plugin_storage: grant.pluginStorage, workspace_storage: grant.workspaceStorage },
      platform_capabilities: {},
    },
    context: {
      conversation_id: conversationId,
      thread_id: event.thread_id ?? null,
      latest_cursor: latestSeq === null ? null : String(latestSeq),
      transcript_seq: latestSeq,
      event_seq: null,
      has_history_before: latestSeq !== null,
      inline_policy: {
        mode: "current_event",
        delivered_count: 0,
        source_total_count: null,
        messages_complete: false,
        reason: "self_managed_context",
      },
      available_apis: availableApisOf({ manifest, binding, grant, conversationId }),
    },
    state,
    runtime: {
      host: "keel",
      protocol_version: "1",
      langbot_version: null,
      trace_id: runId,
      deadline_at: options.deadlineAt,
      metadata: {
        bot_id: event.bot_id ?? null,
        workspace_id: event.workspace_id ?? null,
        host_version: options.hostVersion,
        ...traceMetadataOf(options.traceContext),
      },
    },
    config: binding.runner_config,
    adapter: { extra: {} },
    metadata: {},
  };
}

/** The event as a runner sees it, in its context or in a steering item. */
export function eventContextOf(event: AgentEventEnvelope) {
  return {
    event_id: event.event_id,
    event_type: event.event_type,
    event_time: event.event_time ?? null,
    source: event.source,
    source_event_type: event.source_event_type ?? null,
    raw_ref: event.raw_ref ?? null,
    data: event.data,
  };
}

/** The event's conversation as a runner sees it, or null for an event outside one. */
export function conversationContextOf(event: AgentEventEnvelope) {
  if (!event.conversation_id) return null;
  return {
    conversation_id: event.conversation_id,
    thread_id: event.thread_id ?? null,
    sender_id: event.actor?.actor_id ?? null,
    bot_id: event.bot_id ?? null,
    workspace_id: event.workspace_id ?? null,
    launcher_type: null,
    launcher_id: null,
  };
}

/**
 * The pulls a run may make. The first text's follow the manifest's permissions; of the newer ones, `prompt_get`
 * is offered when the binding has a prompt, `steering_pull` when the runner declares the `steering` capability,
 * and the run ledger to every run — what a ledger call may reach (the run's own records, its runner's runs in its
 * conversations) is bounded by the call's own checks, not by an opt-in.
 */
export function availableApisOf(options: {
  manifest: AgentRunnerManifest;
  binding: AgentBinding;
  grant: RunGrant;
  conversationId: string | null;
}): ContextApiCapabilities {
  const { manifest, binding, grant, conversationId } = options;
  const permissions = manifest.permissions;
  return {
    history_page: permissions.history.includes("page") && conversationId !== null,
    history_search: permissions.history.includes("search") && conversationId !== null,
    event_get: permissions.events.includes("get"),
    event_page: permissions.events.includes("page") && conversationId !== null,
    artifact_metadata: permissions.artifacts.includes("metadata"),
    artifact_read: permissions.artifacts.includes("read"),
    state: binding.state_policy.enable_state && binding.state_policy.state_scopes.length > 0,
    storage: grant.pluginStorage || grant.workspaceStorage,
    prompt_get: binding.prompt != null,
    steering_pull: manifest.capabilities.steering,
    run_get: true,
    run_list: true,
    run_events_page: true,
    run_cancel: true,
    run_append_result: true,
    run_finalize: true,
  };
}

const SOURCES = new Set(["platform", "webui", "api", "scheduler", "system", "host_adapter"]);

function triggerSource(
  source: string,
): "platform" | "webui" | "api" | "scheduler" | "system" | "host_adapter" {
  if (SOURCES.has(source)) return source as "platform";
  return source === "platform_adapter" ? "platform" : source === "http_api" ? "api" : "system";
}
