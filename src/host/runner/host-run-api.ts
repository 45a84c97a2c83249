import { createHash } from "node:crypto";
import type { ActionChannel } from "../transport/action-channel.js";
import { ActionCallError } from "../transport/channel-errors.js";
import {
  FILE_TRANSFER_ERROR_CODES,
  FileTransferError,
  receiveFiles,
  sendFile,
} from "../transport/file-transfer.js";
import { AGENT_API_ERROR_CODES, AgentApiError } from "../wire/api-error.js";
import type { StateScope } from "../wire/run-context.js";
import type { JsonValue } from "../wire/run-result.js";
import {
  type SteeringInputItem,
  SteeringInputItemSchema,
  type SteeringPullMode,
} from "../wire/steering-item.js";

/** The wire actions of the run-scoped API proxy, a runner's calls to its host. */
export const PROXY_ACTIONS = {
  INVOKE_LLM: "invoke_llm",
  INVOKE_LLM_STREAM: "invoke_llm_stream",
  INVOKE_RERANK: "invoke_rerank",
  GET_TOOL_DETAIL: "get_tool_detail",
  CALL_TOOL: "call_tool",
  GET_FILE: "get_file",
  RETRIEVE_KNOWLEDGE: "retrieve_knowledge_base",
  HISTORY_PAGE: "history_page",
  HISTORY_SEARCH: "history_search",
  EVENT_GET: "event_get",
  EVENT_PAGE: "event_page",
  ARTIFACT_METADATA: "artifact_metadata",
  ARTIFACT_READ: "artifact_read",
  STATE_GET: "state_get",
  STATE_SET: "state_set",
  STATE_DELETE: "state_delete",
  STATE_LIST: "state_list",
  STORAGE_GET: "get_plugin_storage",
  STORAGE_SET: "set_plugin_storage",
  STORAGE_DELETE: "delete_plugin_storage",
  STORAGE_KEYS: "get_plugin_storage_keys",
  WORKSPACE_STORAGE_GET: "get_workspace_storage",
  WORKSPACE_STORAGE_SET: "set_workspace_storage",
  WORKSPACE_STORAGE_DELETE: "delete_workspace_storage",
  WORKSPACE_STORAGE_KEYS: "get_workspace_storage_keys",
  PLATFORM_REQUEST_ACTION: "request_platform_action",
  GET_PROMPT: "get_prompt",
  STEERING_PULL: "steering_pull",
  RUN_GET: "run_get",
  RUN_LIST: "run_list",
  RUN_EVENTS_PAGE: "run_events_page",
  RUN_CANCEL: "run_cancel",
  RUN_APPEND_RESULT: "run_append_result",
  RUN_FINALIZE: "run_finalize",
} as const;

/** Each operation's own bound; every call is further bound by what is left of the run's deadline. */
const TIMEOUTS_MS = {
  llm: 120_000,
  tool: 180_000,
  lookup: 30_000,
  small: 15_000,
  read: 60_000,
  steering: 10_000,
} as const;

export type StorageArea = "plugin" | "workspace";

/** Above this many bytes a stored value is sent as a file first, so the request stays under the host's bound. */
const INLINE_VALUE_BYTES = 512 * 1024;

/**
 * The API a runner uses inside one host run, every call carrying the run's id: `api.models.invoke`,
 * `api.tools.call`, `api.history.page`, … (camelCase here, snake_case on the wire). Checks made here would only
 * be a convenience — the host checks every call — so there are none; a refusal arrives as an
 * {@link AgentApiError} with the host's code.
 */
export class HostRunApi {
  constructor(
    private readonly channel: ActionChannel,
    readonly runId: string,
    /** Unix epoch seconds, or null for no deadline. */
    private readonly deadlineAt: number | null | undefined,
  ) {}

  readonly models = {
    invoke: (
      modelId: string,
      messages: unknown[],
      options: { funcs?: unknown[]; extraArgs?: Record<string, unknown> } = {},
    ) => this.call(PROXY_ACTIONS.INVOKE_LLM, this.llmData(modelId, messages, options), TIMEOUTS_MS.llm),
    stream: (
      modelId: string,
      messages: unknown[],
      options: {
        funcs?: unknown[];
        extraArgs?: Record<string, unknown>;
        signal?: AbortSignal | undefined;
      } = {},
    ) =>
      this.stream(PROXY_ACTIONS.INVOKE_LLM_STREAM, this.llmData(modelId, messages, options), {
        operationMs: TIMEOUTS_MS.llm,
        signal: options.signal,
      }),
    rerank: (modelId: string, query: string, options: { documents: string[]; topK?: number }) =>
      this.call(
        PROXY_ACTIONS.INVOKE_RERANK,
        {
          rerank_model_uuid: modelId,
          query,
          documents: options.documents,
          top_k: options.topK ?? null,
          extra_args: {},
        },
        TIMEOUTS_MS.lookup,
      ),
  };

  readonly tools = {
    getDetail: (toolName: string) =>
      this.call(PROXY_ACTIONS.GET_TOOL_DETAIL, { tool_name: toolName }, TIMEOUTS_MS.lookup),
    call: (toolName: string, parameters: Record<string, unknown>, signal?: AbortSignal) =>
      this.call(
        PROXY_ACTIONS.CALL_TOOL,
        { tool_name: toolName, parameters },
        { operationMs: TIMEOUTS_MS.tool, signal },
      ),
  };

  readonly knowledge = {
    retrieve: (
      kbId: string,
      queryText: string,
      options: { topK?: number; filters?: Record<string, unknown> } = {},
    ) =>
      this.call(
        PROXY_ACTIONS.RETRIEVE_KNOWLEDGE,
        { kb_id: kbId, query_text: queryText, top_k: options.topK ?? 5, filters: options.filters ?? null },
        TIMEOUTS_MS.lookup,
      ),
  };

  readonly history = {
    page: (
      options: {
        conversationId?: string;
        beforeCursor?: string;
        afterCursor?: string;
        limit?: number;
        direction?: "backward" | "forward";
        includeArtifacts?: boolean;
      } = {},
    ) =>
      this.call(
        PROXY_ACTIONS.HISTORY_PAGE,
        {
          conversation_id: options.conversationId ?? null,
          before_cursor: options.beforeCursor ?? null,
          after_cursor: options.afterCursor ?? null,
          limit: options.limit ?? 50,
          direction: options.direction ?? "backward",
          include_artifacts: options.includeArtifacts ?? false,
        },
        TIMEOUTS_MS.lookup,
      ),
    search: (query: string, options: { filters?: Record<string, unknown>; topK?: number } = {}) =>
      this.call(
        PROXY_ACTIONS.HISTORY_SEARCH,
        { query, filters: options.filters ?? {}, top_k: options.topK ?? 10 },
        TIMEOUTS_MS.lookup,
      ),
  };

  readonly events = {
    get: (eventId: string) => this.call(PROXY_ACTIONS.EVENT_GET, { event_id: eventId }, TIMEOUTS_MS.small),
    page: (
      options: { beforeCursor?: string; limit?: number; conversationId?: string; eventTypes?: string[] } = {},
    ) =>
      this.call(
        PROXY_ACTIONS.EVENT_PAGE,
        {
          before_cursor: options.beforeCursor ?? null,
          limit: options.limit ?? 50,
          conversation_id: options.conversationId ?? null,
          event_types: options.eventTypes ?? null,
        },
        TIMEOUTS_MS.lookup,
      ),
  };

  readonly artifacts = {
    metadata: (artifactId: string) =>
      this.call(PROXY_ACTIONS.ARTIFACT_METADATA, { artifact_id: artifactId }, TIMEOUTS_MS.small),
    readRange: (artifactId: string, offset = 0, length = 65_536) =>
      this.call(
        PROXY_ACTIONS.ARTIFACT_READ,
        { artifact_id: artifactId, offset, limit: length },
        TIMEOUTS_MS.read,
      ),
  };

  readonly state = {
    get: async (scope: StateScope, key: string): Promise<JsonValue | null> =>
      ((await this.call(PROXY_ACTIONS.STATE_GET, { scope, key }, TIMEOUTS_MS.small)).value ??
        null) as JsonValue | null,
    set: (scope: StateScope, key: string, value: JsonValue) =>
      this.call(PROXY_ACTIONS.STATE_SET, { scope, key, value }, TIMEOUTS_MS.small),
    delete: (scope: StateScope, key: string) =>
      this.call(PROXY_ACTIONS.STATE_DELETE, { scope, key }, TIMEOUTS_MS.small),
    list: (scope: StateScope, options: { prefix?: string; limit?: number } = {}) =>
      this.call(
        PROXY_ACTIONS.STATE_LIST,
        { scope, prefix: options.prefix ?? null, limit: options.limit ?? 100 },
        TIMEOUTS_MS.small,
      ),
  };

  readonly storage = {
    get: (area: StorageArea, key: string) =>
      this.call(
        area === "plugin" ? PROXY_ACTIONS.STORAGE_GET : PROXY_ACTIONS.WORKSPACE_STORAGE_GET,
        { key },
        TIMEOUTS_MS.small,
      ),
    set: async (area: StorageArea, key: string, value: Uint8Array) =>
      this.call(
        area === "plugin" ? PROXY_ACTIONS.STORAGE_SET : PROXY_ACTIONS.WORKSPACE_STORAGE_SET,
        value.length > INLINE_VALUE_BYTES
          ? { key, file_key: await this.sendFile(value) }
          : { key, value_base64: Buffer.from(value).toString("base64") },
        TIMEOUTS_MS.small,
      ),
    delete: (area: StorageArea, key: string) =>
      this.call(
        area === "plugin" ? PROXY_ACTIONS.STORAGE_DELETE : PROXY_ACTIONS.WORKSPACE_STORAGE_DELETE,
        { key },
        TIMEOUTS_MS.small,
      ),
    list: (area: StorageArea) =>
      this.call(
        area === "plugin" ? PROXY_ACTIONS.STORAGE_KEYS : PROXY_ACTIONS.WORKSPACE_STORAGE_KEYS,
        {},
        TIMEOUTS_MS.small,
      ),
  };

  readonly files = {
    /**
     * Reads a file the host granted the run (`ctx.resources.files`): the host sends it in `__file_chunk` pieces,
     * then names it; the bytes are checked against the digest the host gives.
     */
    get: async (fileId: string, signal?: AbortSignal) => {
      const receiver = receiveFiles(this.channel);
      const answer = await this.call(
        PROXY_ACTIONS.GET_FILE,
        { file_id: fileId },
        { operationMs: TIMEOUTS_MS.read, signal },
      );
      const fileKey = String(answer.file_key);
      const bytes = receiver.take(fileKey);
      if (
        typeof answer.sha256 === "string" &&
        createHash("sha256").update(bytes).digest("hex") !== answer.sha256
      )
        throw new FileTransferError(
          FILE_TRANSFER_ERROR_CODES.TORN,
          `file ${fileId} does not match its digest`,
          fileKey,
        );
      return {
        bytes,
        name: typeof answer.file_name === "string" ? answer.file_name : null,
        mimeType: typeof answer.mime_type === "string" ? answer.mime_type : null,
      };
    },
  };

  readonly platform = {
    requestAction: (action: string, target?: Record<string, unknown>, payload?: Record<string, unknown>) =>
      this.call(
        PROXY_ACTIONS.PLATFORM_REQUEST_ACTION,
        { action, target: target ?? null, payload: payload ?? null },
        TIMEOUTS_MS.small,
      ),
  };

  readonly prompt = {
    /** The host's prompt for this run, `[{role, content}, …]`; empty when the host has none. */
    get: async (): Promise<{ role: string; content: unknown }[]> => {
      const answer = await this.call(PROXY_ACTIONS.GET_PROMPT, {}, TIMEOUTS_MS.small);
      return Array.isArray(answer.prompt) ? (answer.prompt as { role: string; content: unknown }[]) : [];
    },
  };

  readonly steering = {
    /** The follow-up inputs given to this run since it last asked, oldest first, each once. */
    pull: async (mode: SteeringPullMode = "all", limit?: number): Promise<SteeringInputItem[]> => {
      const answer = await this.call(
        PROXY_ACTIONS.STEERING_PULL,
        { mode, limit: limit ?? null },
        TIMEOUTS_MS.steering,
      );
      const items = SteeringInputItemSchema.array().safeParse(answer.items ?? []);
      if (!items.success)
        throw new AgentApiError(
          AGENT_API_ERROR_CODES.RUNTIME_ERROR,
          "the host sent malformed steering items",
        );
      return items.data;
    },
  };

  /**
   * The host's run ledger: this run's record and results, its runner's other runs in its conversations; cancel,
   * append a result to, or end this run. `runId` defaults to this run.
   */
  readonly runs = {
    get: (runId?: string) =>
      this.call(PROXY_ACTIONS.RUN_GET, { target_run_id: runId ?? this.runId }, TIMEOUTS_MS.small),
    list: (
      options: { conversationId?: string; statuses?: string[]; beforeCursor?: string; limit?: number } = {},
    ) =>
      this.call(
        PROXY_ACTIONS.RUN_LIST,
        {
          conversation_id: options.conversationId ?? null,
          statuses: options.statuses ?? null,
          before_cursor: options.beforeCursor ?? null,
          limit: options.limit ?? 50,
        },
        TIMEOUTS_MS.lookup,
      ),
    eventsPage: (
      options: {
        runId?: string;
        beforeCursor?: string;
        afterCursor?: string;
        limit?: number;
        direction?: "forward" | "backward";
      } = {},
    ) =>
      this.call(
        PROXY_ACTIONS.RUN_EVENTS_PAGE,
        {
          target_run_id: options.runId ?? this.runId,
          before_cursor: options.beforeCursor ?? null,
          after_cursor: options.afterCursor ?? null,
          limit: options.limit ?? 50,
          direction: options.direction ?? "forward",
        },
        TIMEOUTS_MS.lookup,
      ),
    cancel: (options: { runId?: string; reason?: string } = {}) =>
      this.call(
        PROXY_ACTIONS.RUN_CANCEL,
        { target_run_id: options.runId ?? this.runId, reason: options.reason ?? null },
        TIMEOUTS_MS.small,
      ),
    appendResult: (result: Record<string, unknown> & { run_id: string }) =>
      this.call(PROXY_ACTIONS.RUN_APPEND_RESULT, { target_run_id: result.run_id, result }, TIMEOUTS_MS.small),
    finalize: (
      options: { runId?: string; status?: "completed" | "failed" | "cancelled"; reason?: string } = {},
    ) =>
      this.call(
        PROXY_ACTIONS.RUN_FINALIZE,
        {
          target_run_id: options.runId ?? this.runId,
          status: options.status ?? null,
          reason: options.reason ?? null,
        },
        TIMEOUTS_MS.small,
      ),
  };

  private sendFile(bytes: Uint8Array): Promise<string> {
    return sendFile(this.channel, bytes, { timeoutMs: this.timeoutFor(TIMEOUTS_MS.small) });
  }

  /** Milliseconds a call may take: its own bound, or what is left of the run, at least 1 ms. */
  timeoutFor(operationMs: number): number {
    if (this.deadlineAt == null) return operationMs;
    return Math.max(1, Math.min(operationMs, Math.floor(this.deadlineAt * 1000 - Date.now())));
  }

  private llmData(
    modelId: string,
    messages: unknown[],
    options: { funcs?: unknown[]; extraArgs?: Record<string, unknown> },
  ) {
    return {
      llm_model_uuid: modelId,
      messages,
      funcs: options.funcs ?? [],
      extra_args: options.extraArgs ?? {},
    };
  }

  private async call(
    action: string,
    data: Record<string, unknown>,
    bound: number | { operationMs: number; signal?: AbortSignal | undefined },
  ): Promise<Record<string, unknown>> {
    const { operationMs, signal } =
      typeof bound === "number" ? { operationMs: bound, signal: undefined } : bound;
    try {
      return await this.channel.call(
        action,
        { ...data, run_id: this.runId },
        {
          timeoutMs: this.timeoutFor(operationMs),
          ...(signal ? { signal } : {}),
        },
      );
    } catch (error) {
      throw asApiError(error);
    }
  }

  private async *stream(
    action: string,
    data: Record<string, unknown>,
    bound: { operationMs: number; signal?: AbortSignal | undefined },
  ) {
    try {
      yield* this.channel.stream(
        action,
        { ...data, run_id: this.runId },
        { timeoutMs: this.timeoutFor(bound.operationMs), ...(bound.signal ? { signal: bound.signal } : {}) },
      );
    } catch (error) {
      throw asApiError(error);
    }
  }
}

function asApiError(error: unknown): unknown {
  if (error instanceof ActionCallError) {
    return (
      error.apiError ??
      new AgentApiError(AGENT_API_ERROR_CODES.RUNTIME_ERROR, error.message, { cause: error })
    );
  }
  return error;
}
