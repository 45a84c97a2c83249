// The proxy serves every action of the runner API in one place, so the order of its checks is written once.
import type { LanguageModel } from "../../contracts/language-model.js";
import { PROXY_ACTIONS } from "../runner/host-run-api.js";
import type { ActionChannel } from "../transport/action-channel.js";
import { AgentApiError, AGENT_API_ERROR_CODES as CODES } from "../wire/api-error.js";
import type { PermissionCategory } from "../wire/manifest.js";
import { limitToolOutput, MAX_RESULT_BYTES } from "../wire/result-size.js";
import { type ContextApiCapabilities, StateScopeSchema } from "../wire/run-context.js";
import { historyGrantOf, historyTargetOf, visibleToRun } from "./history-scope.js";
import { collectModel, languageModel, requestOf, wireToolCall } from "./host-model-calls.js";
import type { HostStores } from "./host-stores.js";
import type { KnowledgeBase, RerankModel } from "./knowledge-base.js";
import {
  boundedLimit,
  checkStateValue,
  cursor,
  pageOfTranscript,
  publicArtifact,
  publicEvent,
} from "./proxy-helpers.js";
import {
  type HostFile,
  rerankDocuments,
  retrieveKnowledge,
  sendHostFile,
  takeSentFile,
} from "./resource-answers.js";
import type { RunSession } from "./run-session.js";

/** A tool the host runs for runners. */
export interface HostTool {
  description?: string;
  parameters?: Record<string, unknown>;
  invoke(
    parameters: Record<string, unknown>,
    options: { signal: AbortSignal; runId: string },
  ): Promise<unknown>;
}

/** What the proxy serves from: the host's models and tools, its stores, and the run sessions in flight. */
export interface RunApiProxyOptions {
  sessions: ReadonlyMap<string, RunSession>;
  stores: HostStores;
  models: ReadonlyMap<string, LanguageModel>;
  tools: ReadonlyMap<string, HostTool>;
  knowledgeBases?: ReadonlyMap<string, KnowledgeBase>;
  rerankModels?: ReadonlyMap<string, RerankModel>;
  files?: ReadonlyMap<string, HostFile>;
  /** Asked for every platform action a runner requests that manifest and binding allow; refused without it. */
  approvePlatformAction?: (request: { runId: string; action: string; payload: unknown }) => Promise<boolean>;
  /** The largest proxy request accepted, in bytes of JSON; 1 MiB. */
  maxRequestBytes?: number;
  /** Proxy calls one run may make; 10,000. */
  maxCallsPerRun?: number;
}

/** What a proxy call is checked for besides the run, the caller, size, rate and deadline. */
export interface Check {
  /** The pull the run's context must have offered (`context.available_apis`). */
  api?: keyof ContextApiCapabilities;
  /** The manifest operation the call needs: `["models", "invoke"]`. */
  operation?: [PermissionCategory, string];
  /** The resource the call names, checked against the run's grant. */
  resource?: (data: Record<string, unknown>, session: RunSession) => { name: string; granted: boolean };
}

interface ProxyCall {
  action: string;
  data: Record<string, unknown>;
  check: Check;
}

/** One action the proxy serves: its name and its checks. */
export interface ServedAction extends Check {
  action: string;
}

/** Serves one checked call of a run; what it throws is audited and answered as an `AgentAPIError`. */
export type Handler = (
  data: Record<string, unknown>,
  session: RunSession,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

const MAX_STORAGE_BYTES = 10 * 1024 * 1024;
const MAX_READ_BYTES = 10 * 1024 * 1024;

/**
 * The run-scoped API runners call back into the host with. Every call is checked in one order — run id present,
 * run active, caller is the connection the run was started on (and the plugin it names, when the runtime says),
 * operation in the manifest, resource in the run's grant, scope (conversation) within bounds, then size, rate and
 * deadline — and every call, allowed or not, leaves one audit record.
 */
export class RunApiProxy {
  private readonly maxRequestBytes: number;
  private readonly maxCallsPerRun: number;

  constructor(private readonly options: RunApiProxyOptions) {
    this.maxRequestBytes = options.maxRequestBytes ?? 1024 * 1024;
    this.maxCallsPerRun = options.maxCallsPerRun ?? 10_000;
  }

  /** Serves the proxy's actions on a connection to a plugin runtime. */
  attach(channel: ActionChannel): void {
    const { stores, models, tools } = this.options;
    const single = (action: string, check: Check, handle: Handler) =>
      this.serve(channel, { action, ...check }, handle);
    const grantedModel = (data: Record<string, unknown>, session: RunSession) => {
      const name = String(data.llm_model_uuid ?? data.rerank_model_uuid ?? "");
      return { name, granted: session.grant.models.has(name) };
    };
    const grantedTool = (data: Record<string, unknown>, session: RunSession) => {
      const name = String(data.tool_name ?? "");
      return { name, granted: session.grant.tools.has(name) };
    };
    single(
      PROXY_ACTIONS.INVOKE_LLM,
      { operation: ["models", "invoke"], resource: grantedModel },
      async (data, _session, signal) => {
        const { text, toolCalls } = await collectModel(models, data, signal);
        return {
          message: {
            role: "assistant",
            content: text,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
        };
      },
    );
    channel.handle(PROXY_ACTIONS.INVOKE_LLM_STREAM, (data, context) =>
      this.streamModel(channel, data, context.signal),
    );
    single(
      PROXY_ACTIONS.INVOKE_RERANK,
      { operation: ["models", "rerank"], resource: grantedModel },
      (data, _session, signal) => rerankDocuments(this.options.rerankModels ?? new Map(), data, signal),
    );
    single(
      PROXY_ACTIONS.GET_TOOL_DETAIL,
      { operation: ["tools", "detail"], resource: grantedTool },
      async (data) => {
        const tool = tools.get(String(data.tool_name))!;
        const parameters = tool.parameters ?? { type: "object", properties: {} };
        return {
          tool: {
            name: data.tool_name,
            description: tool.description ?? "",
            parameters,
            spec: { parameters },
          },
        };
      },
    );
    single(
      PROXY_ACTIONS.CALL_TOOL,
      { operation: ["tools", "call"], resource: grantedTool },
      async (data, session, signal) => {
        const parameters = (data.parameters ?? {}) as Record<string, unknown>;
        const result = await tools
          .get(String(data.tool_name))!
          .invoke(parameters, { signal, runId: session.runId });
        // The answer carries the output twice (both keys, for older callers): each half gets half the 1 MiB.
        const output = limitToolOutput(result, MAX_RESULT_BYTES / 2);
        return { result: output, tool_response: output };
      },
    );
    single(
      PROXY_ACTIONS.RETRIEVE_KNOWLEDGE,
      {
        operation: ["knowledge_bases", "retrieve"],
        resource: (data, session) => ({
          name: String(data.kb_id ?? ""),
          granted: session.grant.knowledgeBases.has(String(data.kb_id)),
        }),
      },
      (data, _session, signal) => retrieveKnowledge(this.options.knowledgeBases ?? new Map(), data, signal),
    );
    single(
      PROXY_ACTIONS.GET_FILE,
      {
        resource: (data, session) => ({
          name: `file:${String(data.file_id ?? "")}`,
          granted: session.grant.files.has(String(data.file_id)),
        }),
      },
      (data, _session, signal) => sendHostFile(this.options.files ?? new Map(), data, { channel, signal }),
    );
    single(
      PROXY_ACTIONS.HISTORY_PAGE,
      { operation: ["history", "page"], resource: conversationOf },
      async (data, session) => {
        const { conversationId, threadId } = historyTargetOf(data, session);
        if (!conversationId) return { items: [], next_cursor: null, prev_cursor: null, has_more: false };
        const limit = boundedLimit(data.limit, 50);
        const direction = data.direction === "forward" ? "forward" : "backward";
        const page = await stores.transcript.page({
          conversationId,
          ...(threadId === undefined ? {} : { threadId }),
          limit,
          direction,
          ...cursor("beforeSeq", data.before_cursor),
          ...cursor("afterSeq", data.after_cursor),
        });
        return pageOfTranscript(page, data.include_artifacts === true);
      },
    );
    single(
      PROXY_ACTIONS.HISTORY_SEARCH,
      { operation: ["history", "search"], resource: searchConversationOf },
      async (data, session) => {
        const filters = (data.filters ?? {}) as {
          roles?: string[];
          conversation_id?: unknown;
          thread_id?: unknown;
        };
        const { conversationId, threadId } = historyTargetOf(filters, session);
        const query = String(data.query ?? "");
        if (!conversationId) return { items: [], total_count: 0, query };
        const items = await stores.transcript.search({
          conversationId,
          ...(threadId === undefined ? {} : { threadId }),
          text: query,
          topK: boundedLimit(data.top_k, 10),
          ...(Array.isArray(filters.roles) ? { roles: filters.roles } : {}),
        });
        return {
          items: pageOfTranscript({ items, hasMore: false }, false).items,
          total_count: items.length,
          query,
        };
      },
    );
    single(PROXY_ACTIONS.EVENT_GET, { operation: ["events", "get"] }, async (data, session) => {
      const event = await stores.events.get(String(data.event_id ?? ""));
      if (!event || !visibleToRun(event, session))
        throw new AgentApiError(CODES.NOT_FOUND, "no such event for this run");
      return publicEvent(event);
    });
    single(
      PROXY_ACTIONS.EVENT_PAGE,
      { operation: ["events", "page"], resource: conversationOf },
      async (data, session) => {
        const { conversationId, threadId } = historyTargetOf(data, session);
        if (!conversationId) return { items: [], next_cursor: null, prev_cursor: null, has_more: false };
        const page = await stores.events.page({
          conversationId,
          ...(threadId === undefined ? {} : { threadId }),
          limit: boundedLimit(data.limit, 50),
          eventTypes: Array.isArray(data.event_types) ? (data.event_types as string[]) : null,
          ...cursor("beforeSeq", data.before_cursor),
        });
        const items = page.items.map(publicEvent);
        return {
          items,
          next_cursor: page.hasMore ? (items.at(-1)?.cursor ?? null) : null,
          prev_cursor: null,
          has_more: page.hasMore,
        };
      },
    );
    const visibleArtifact = async (data: Record<string, unknown>, session: RunSession) => {
      const artifact = await stores.artifacts.get(String(data.artifact_id ?? ""));
      if (
        !artifact ||
        !visibleToRun(artifact, session) ||
        (artifact.expires_at != null && artifact.expires_at < Date.now() / 1000)
      ) {
        throw new AgentApiError(CODES.NOT_FOUND, "no such artifact for this run");
      }
      return artifact;
    };
    single(PROXY_ACTIONS.ARTIFACT_METADATA, { operation: ["artifacts", "metadata"] }, async (data, session) =>
      publicArtifact(await visibleArtifact(data, session)),
    );
    single(PROXY_ACTIONS.ARTIFACT_READ, { operation: ["artifacts", "read"] }, async (data, session) => {
      const artifact = await visibleArtifact(data, session);
      const offset = data.offset ?? 0;
      const limit = data.limit ?? data.length ?? 65_536;
      if (
        !Number.isSafeInteger(offset) ||
        (offset as number) < 0 ||
        !Number.isSafeInteger(limit) ||
        (limit as number) <= 0
      ) {
        throw new AgentApiError(
          CODES.INVALID_ARGUMENT,
          "offset must be an integer ≥ 0 and limit an integer > 0",
        );
      }
      const length = Math.min(limit as number, MAX_READ_BYTES);
      const bytes = await stores.artifacts.read(artifact.artifact_id, {
        offset: offset as number,
        limit: length,
      });
      const size = artifact.size_bytes ?? null;
      return {
        artifact_id: artifact.artifact_id,
        mime_type: artifact.mime_type ?? null,
        size_bytes: size,
        offset,
        length: bytes?.length ?? null,
        content_base64: bytes ? Buffer.from(bytes).toString("base64") : null,
        has_more: size !== null && (offset as number) + (bytes?.length ?? 0) < size,
      };
    });
    const stateKey = (data: Record<string, unknown>, session: RunSession) => {
      const scope = StateScopeSchema.safeParse(data.scope ?? "conversation");
      const key = scope.success ? session.stateKeys[scope.data] : undefined;
      return {
        name: `${String(data.scope ?? "conversation")}:${String(data.key ?? data.prefix ?? "")}`,
        granted: key !== undefined,
      };
    };
    const scopeKeyOf = (data: Record<string, unknown>, session: RunSession) =>
      session.stateKeys[StateScopeSchema.parse(data.scope ?? "conversation")]!;
    const stateName = (data: Record<string, unknown>) => {
      const key = data.key === "conversation_id" ? "external.conversation_id" : data.key;
      if (typeof key !== "string" || key.length === 0 || key.length > 256)
        throw new AgentApiError(CODES.INVALID_ARGUMENT, "a state key is a string of 1 to 256 characters");
      return key;
    };
    single(PROXY_ACTIONS.STATE_GET, { resource: stateKey }, async (data, session) => ({
      value: (await stores.state.get(scopeKeyOf(data, session), stateName(data))) ?? null,
    }));
    single(PROXY_ACTIONS.STATE_SET, { resource: stateKey }, async (data, session) => {
      await stores.state.set(scopeKeyOf(data, session), stateName(data), checkStateValue(data.value));
      return { success: true };
    });
    single(PROXY_ACTIONS.STATE_DELETE, { resource: stateKey }, async (data, session) => ({
      success: await stores.state.delete(scopeKeyOf(data, session), stateName(data)),
    }));
    single(PROXY_ACTIONS.STATE_LIST, { resource: stateKey }, async (data, session) => {
      const listed = await stores.state.list(scopeKeyOf(data, session), {
        prefix: typeof data.prefix === "string" ? data.prefix : null,
        limit: boundedLimit(data.limit, 100),
      });
      return { keys: listed.keys, has_more: listed.hasMore };
    });
    for (const [area, actions] of [
      [
        "plugin",
        [
          PROXY_ACTIONS.STORAGE_GET,
          PROXY_ACTIONS.STORAGE_SET,
          PROXY_ACTIONS.STORAGE_DELETE,
          PROXY_ACTIONS.STORAGE_KEYS,
        ],
      ],
      [
        "workspace",
        [
          PROXY_ACTIONS.WORKSPACE_STORAGE_GET,
          PROXY_ACTIONS.WORKSPACE_STORAGE_SET,
          PROXY_ACTIONS.WORKSPACE_STORAGE_DELETE,
          PROXY_ACTIONS.WORKSPACE_STORAGE_KEYS,
        ],
      ],
    ] as const) {
      const check: Check = {
        resource: (data, session) => ({
          name: `${area}:${String(data.key ?? "")}`,
          granted: area === "plugin" ? session.grant.pluginStorage : session.grant.workspaceStorage,
        }),
      };
      const owner = (session: RunSession) =>
        area === "plugin"
          ? `plugin:${session.pluginIdentity}`
          : `workspace:${session.event.workspace_id ?? "default"}`;
      const [get, set, remove, keys] = actions;
      single(get, check, async (data, session) => {
        const value = await stores.storage.get(owner(session), String(data.key));
        return { value_base64: value ? Buffer.from(value).toString("base64") : null };
      });
      single(set, check, async (data, session) => {
        // A value too large for one request comes as a file sent beforehand, named by its key.
        const value =
          typeof data.file_key === "string"
            ? takeSentFile(channel, data.file_key)
            : Buffer.from(String(data.value_base64 ?? ""), "base64");
        if (value.length > MAX_STORAGE_BYTES)
          throw new AgentApiError(CODES.PAYLOAD_TOO_LARGE, "a stored value is at most 10 MiB");
        await stores.storage.set(owner(session), String(data.key), value);
        return { success: true };
      });
      single(remove, check, async (data, session) => ({
        success: await stores.storage.delete(owner(session), String(data.key)),
      }));
      single(keys, check, async (_data, session) => ({ keys: await stores.storage.keys(owner(session)) }));
    }
    single(
      PROXY_ACTIONS.PLATFORM_REQUEST_ACTION,
      {
        resource: (data, session) => ({
          name: String(data.action ?? ""),
          granted: session.grant.platformActions.has(String(data.action)),
        }),
      },
      async (data, session) => {
        const approved = await this.options.approvePlatformAction?.({
          runId: session.runId,
          action: String(data.action),
          payload: data.payload,
        });
        if (!approved)
          throw new AgentApiError(
            CODES.UNAUTHORIZED,
            `platform action ${String(data.action)} was not approved`,
          );
        return { accepted: true };
      },
    );
  }

  /** Serves one action on a channel behind the proxy's checks, with its audit record. */
  serve(channel: ActionChannel, served: ServedAction, handle: Handler): void {
    const { action, ...check } = served;
    channel.handle(action, async (data, context) => {
      const call: ProxyCall = { action, data, check };
      const session = await this.guard(channel, call);
      try {
        const answer = await handle(data, session, context.signal);
        this.audit(call, session, "ok");
        return answer;
      } catch (error) {
        throw this.failed(call, session, error);
      }
    });
  }

  private async *streamModel(channel: ActionChannel, data: Record<string, unknown>, signal: AbortSignal) {
    const action = PROXY_ACTIONS.INVOKE_LLM_STREAM;
    const check: Check = {
      operation: ["models", "stream"],
      resource: (d, s) => ({
        name: String(d.llm_model_uuid ?? ""),
        granted: s.grant.models.has(String(d.llm_model_uuid)),
      }),
    };
    const call: ProxyCall = { action, data, check };
    const session = await this.guard(channel, call);
    try {
      const model = languageModel(this.options.models, data);
      const request = requestOf(data, signal);
      const toolCalls: Record<string, unknown>[] = [];
      let sequence = 0;
      for await (const part of model.stream(request)) {
        if (part.type === "text-delta")
          yield { chunk: { role: "assistant", content: part.text, msg_sequence: sequence++ } };
        else if (part.type === "tool-call") toolCalls.push(wireToolCall(part));
        else if (part.type === "error")
          throw new AgentApiError(CODES.RUNTIME_ERROR, part.error.message, {
            retryable: part.error.retryable,
          });
      }
      yield {
        chunk: {
          role: "assistant",
          content: "",
          is_final: true,
          msg_sequence: sequence,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
      };
      this.audit(call, session, "ok");
    } catch (error) {
      throw this.failed(call, session, error);
    }
  }

  /** The checks, in order; a refusal is audited and thrown as the error the runner receives. */
  private async guard(channel: ActionChannel, call: ProxyCall): Promise<RunSession> {
    const { action, data, check } = call;
    const refuse = (code: string, message: string, session?: RunSession): never => {
      const error = new AgentApiError(code, message, { details: { action } });
      this.audit(call, session, code);
      throw error;
    };
    const runId = data.run_id;
    if (typeof runId !== "string" || runId.length === 0)
      return refuse(CODES.NOT_FOUND, "a runner API call must carry its run_id");
    const session = this.options.sessions.get(runId);
    if (!session) return refuse(CODES.NOT_FOUND, "run session not found or expired");
    const caller = data.caller_plugin_identity;
    if (session.channel !== channel || (caller !== undefined && caller !== session.pluginIdentity)) {
      return refuse(CODES.UNAUTHORIZED, "the caller is not the runner of this run", session);
    }
    if (check.api && !session.availableApis[check.api])
      return refuse(CODES.UNAUTHORIZED, `${check.api} is not available to this run`, session);
    if (check.operation) {
      const [category, operation] = check.operation;
      if (!(session.permissions[category] as string[]).includes(operation)) {
        return refuse(
          CODES.UNAUTHORIZED,
          `the runner's manifest does not permit ${category}.${operation}`,
          session,
        );
      }
    }
    const resource = check.resource?.(data, session);
    if (resource && !resource.granted)
      return refuse(
        CODES.UNAUTHORIZED,
        `${resource.name || "the resource"} is not granted to this run`,
        session,
      );
    if (JSON.stringify(data).length > this.maxRequestBytes)
      return refuse(CODES.PAYLOAD_TOO_LARGE, "the request is too large", session);
    if (++session.calls > this.maxCallsPerRun)
      return refuse(CODES.RATE_LIMITED, "this run made too many API calls", session);
    if (session.deadlineAt !== null && Date.now() / 1000 > session.deadlineAt) {
      return refuse(CODES.DEADLINE_EXCEEDED, "the run is past its deadline", session);
    }
    return session;
  }

  private failed(call: ProxyCall, session: RunSession, error: unknown): AgentApiError {
    const apiError =
      error instanceof AgentApiError
        ? error
        : new AgentApiError(CODES.RUNTIME_ERROR, error instanceof Error ? error.message : String(error), {
            cause: error,
          });
    this.audit(call, session, apiError.apiCode);
    return apiError;
  }

  private audit(call: ProxyCall, session: RunSession | undefined, result: string): void {
    const { action, data, check } = call;
    let resource: string | null = null;
    if (session && check.resource) resource = check.resource(data, session).name || null;
    void this.options.stores.audit.record({
      at: Date.now(),
      run_id: typeof data.run_id === "string" ? data.run_id : null,
      runner_id: session?.runnerId ?? null,
      action,
      resource,
      scope: session?.event.conversation_id ? `conversation:${session.event.conversation_id}` : null,
      result,
    });
  }
}

function conversationOf(data: Record<string, unknown>, session: RunSession) {
  return historyGrantOf(historyTargetOf(data, session), session);
}

function searchConversationOf(data: Record<string, unknown>, session: RunSession) {
  return conversationOf((data.filters ?? {}) as Record<string, unknown>, session);
}
