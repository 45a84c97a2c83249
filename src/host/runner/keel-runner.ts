import type { AgentDefinition } from "../../config/app-config-schema.js";
import type { ModelRequest, ModelStreamPart } from "../../contracts/language-model.js";
import type { ToolDecision } from "../../contracts/tool-decision.js";
import { ConfigError } from "../../errors/error-classes.js";
import { KeelError } from "../../errors/keel-error.js";
import { getLogger } from "../../logging/logger.js";
import { type HostBridge, runWithHostBridge } from "../../models/providers/host/host-bridge.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { RunStreamChunk } from "../../runtime/stream-chunk.js";
import type { ActionChannel, ActionContext } from "../transport/action-channel.js";
import { sendFile } from "../transport/file-transfer.js";
import { AgentApiError } from "../wire/api-error.js";
import { INTERACTION_SUBMITTED_EVENT } from "../wire/interaction.js";
import { partsOfWireChunk, toWireFunctions, toWireMessages } from "../wire/llm-messages.js";
import {
  type AgentRunnerManifest,
  AgentRunnerManifestSchema,
  formatRunnerId,
  type ListedRunner,
} from "../wire/manifest.js";
import { nowSeconds } from "../wire/now-seconds.js";
import { limitResultSize } from "../wire/result-size.js";
import {
  type AgentRunContext,
  AgentRunContextSchema,
  type StateScope,
  traceContextOfRun,
} from "../wire/run-context.js";
import {
  describeIssues,
  MessageChunkSchema,
  RUN_FAILURE_CODES,
  type RunResultBody,
} from "../wire/run-result.js";
import { manifestForProfile, profileCarriesResult, type WireProfile } from "../wire/wire-profile.js";
import { HostRunApi } from "./host-run-api.js";
import { KeelResultMapper, SUSPENDED_RUN_KEY } from "./keel-result-mapper.js";
import { ResultQueue } from "./result-queue.js";
import { interactionSupportOf, submittedInteraction } from "./suspension-interactions.js";

/**
 * The actions a runtime answers for its host. `cancel_agent_run` is Keel's: the first text names no cancel call.
 * `list_runners` and `run_runner` are the same two calls under the newest text's names (LIST_RUNNERS,
 * RUN_RUNNER); a Keel runner answers both spellings, and a Keel host falls back to them for a runtime that knows
 * only those.
 */
export const RUNNER_ACTIONS = {
  LIST: "list_agent_runners",
  RUN: "run_agent",
  CANCEL: "cancel_agent_run",
  LIST_RUNNERS: "list_runners",
  RUN_RUNNER: "run_runner",
} as const;

/** The parts of an agent's definition its manifest is built from. */
export type RunnerAgent = Pick<AgentDefinition, "id" | "name" | "description" | "llm" | "tools">;

export interface KeelRunnerOptions {
  runtime: Runtime;
  /** The agents to serve, usually the config's `agents`. */
  agents: readonly RunnerAgent[];
  /** The plugin the runners are addressed under: `plugin:<author>/<name>/<agent id>`; `keel` / `agents`. */
  pluginAuthor?: string;
  pluginName?: string;
  /** Which text of the protocol to write; `seed` by default. */
  profile?: WireProfile;
}

const APPROVE = /^\s*(approve|approved|yes|y|ok|allow)\s*[.!]?\s*$/i;
const DENY = /^\s*(deny|denied|no|n|reject|refuse)\s*[.!]?\s*$/i;

/**
 * Keel agents served as runners to a host: each agent is one runner, described by a manifest built from its
 * definition; a run of it is a Keel run whose events become the protocol's results. Inside a host run the agent's
 * `llm.provider: "host"` model and its `host_tool` tools go through the run's API proxy. A run that suspends for a
 * decision ends `run.failed {code: "runner.suspended"}` with its Keel run id in the host's state of the run's
 * conversation, and the next event of that conversation decides it ("approve" / "deny", or
 * `event.data.decisions`). Where the platform shows interactions, the suspension also asks about each waiting
 * call with one, and the run that carries the answer (`interaction.submitted`) resumes it.
 */
export class KeelRunner {
  private readonly runtime: Runtime;
  private readonly pluginAuthor: string;
  private readonly pluginName: string;
  private readonly profile: WireProfile;
  private readonly agents = new Map<string, { agent: RunnerAgent; manifest: AgentRunnerManifest }>();
  private readonly active = new Map<string, AbortController>();

  constructor(options: KeelRunnerOptions) {
    this.runtime = options.runtime;
    this.pluginAuthor = options.pluginAuthor ?? "keel";
    this.pluginName = options.pluginName ?? "agents";
    this.profile = options.profile ?? "seed";
    for (const agent of options.agents) {
      const manifest = this.manifestOf(agent);
      if (manifest) this.agents.set(agent.id, { agent, manifest });
    }
  }

  /** The runners, as `list_agent_runners` answers. */
  listRunners(): ListedRunner[] {
    return [...this.agents.values()].map(({ agent, manifest }) => ({
      plugin_author: this.pluginAuthor,
      plugin_name: this.pluginName,
      runner_name: agent.id,
      manifest,
    }));
  }

  /** Answers the host's actions on `channel`. */
  serve(channel: ActionChannel): this {
    const list = async () => ({
      runners: this.listRunners().map((entry) => ({
        ...entry,
        manifest: manifestForProfile(entry.manifest, this.profile),
      })),
    });
    const run = (data: Record<string, unknown>, context: ActionContext) =>
      this.run(channel, data, context.signal);
    channel.handle(RUNNER_ACTIONS.LIST, list).handle(RUNNER_ACTIONS.LIST_RUNNERS, list);
    channel.handle(RUNNER_ACTIONS.RUN, run).handle(RUNNER_ACTIONS.RUN_RUNNER, run);
    channel.handle(RUNNER_ACTIONS.CANCEL, async (data) => {
      const controller = this.active.get(String(data.run_id));
      controller?.abort(new KeelError("the host cancelled the run", { code: RUN_FAILURE_CODES.CANCELLED }));
      return { cancelled: controller !== undefined };
    });
    return this;
  }

  /** One run: the results the host streams, each stamped with the run id, a sequence from 1 and a time. */
  async *run(
    channel: ActionChannel,
    data: Record<string, unknown>,
    signal: AbortSignal,
  ): AsyncIterable<Record<string, unknown>> {
    const parsed = AgentRunContextSchema.safeParse(data.context);
    const runId = parsed.success
      ? parsed.data.run_id
      : String((data.context as { run_id?: unknown })?.run_id ?? "");
    let sequence = 0;
    // An oversize result (a tool's huge output, say) is sent cut to 1 MiB rather than failing the run.
    const stamp = (body: RunResultBody): Record<string, unknown> =>
      limitResultSize({
        run_id: runId,
        type: body.type,
        data: body.data as Record<string, unknown>,
        sequence: ++sequence,
        timestamp: nowSeconds(),
        ...(body.usage ? { usage: body.usage } : {}),
      }).result;
    const fail = (code: string, error: string) =>
      stamp({ type: "run.failed", data: { code, error, retryable: false } });
    if (!parsed.success) {
      yield fail("runner.invalid_context", `the run context is not valid: ${describeIssues(parsed.error)}`);
      return;
    }
    const entry = this.agents.get(String(data.runner_name ?? ""));
    if (!entry) {
      yield fail(RUN_FAILURE_CODES.NOT_FOUND, `no runner named ${String(data.runner_name)}`);
      return;
    }
    const context = parsed.data;
    const controller = new AbortController();
    const onChannelAbort = () => controller.abort(signal.reason);
    signal.addEventListener("abort", onChannelAbort, { once: true });
    this.active.set(runId, controller);
    let overran = false;
    const deadlineMs =
      context.runtime.deadline_at == null ? undefined : context.runtime.deadline_at * 1000 - Date.now();
    const deadline =
      deadlineMs === undefined
        ? undefined
        : setTimeout(
            () => {
              overran = true;
              controller.abort(
                new KeelError("the run passed its deadline", { code: RUN_FAILURE_CODES.TIMEOUT }),
              );
            },
            Math.max(0, deadlineMs),
          );
    const queue = new ResultQueue<RunResultBody>();
    const api = new HostRunApi(channel, runId, context.runtime.deadline_at);
    const pump = runWithHostBridge(this.bridgeFor(api, context), () =>
      this.pump({ channel, context, agent: entry.agent, queue, signal: controller.signal, api }),
    )
      .catch((error: unknown) => {
        queue.push({
          type: "run.failed",
          data: { code: RUN_FAILURE_CODES.EXCEPTION, error: errorText(error), retryable: false },
        });
      })
      .finally(() => queue.end());
    try {
      for await (const body of queue) {
        // A call to the host is bounded by the same deadline and can fail a moment before this run's own timer
        // fires; a run that fails at its deadline failed because of it.
        const atDeadline = deadlineMs !== undefined && Date.now() >= context.runtime.deadline_at! * 1000 - 1;
        if (
          (overran && (body.type === "run.failed" || body.type === "run.completed")) ||
          (atDeadline && body.type === "run.failed")
        ) {
          yield stamp({
            type: "run.failed",
            data: { code: RUN_FAILURE_CODES.TIMEOUT, error: "the run passed its deadline", retryable: true },
          });
          continue;
        }
        if (profileCarriesResult(body, this.profile)) yield stamp(body);
      }
      await pump;
    } finally {
      clearTimeout(deadline);
      signal.removeEventListener("abort", onChannelAbort);
      this.active.delete(runId);
      controller.abort();
    }
  }

  /** Runs (or resumes) the Keel run and queues its mapped results. */
  private async pump(options: {
    channel: ActionChannel;
    context: AgentRunContext;
    agent: RunnerAgent;
    queue: ResultQueue<RunResultBody>;
    signal: AbortSignal;
    api: HostRunApi;
  }): Promise<void> {
    const { channel, context, agent, queue, signal, api } = options;
    const streaming = context.delivery.supports_streaming;
    const scope = suspensionScopeOf(context);
    const waiting = context.state[scope][SUSPENDED_RUN_KEY];
    // Where the platform shows interactions, a suspension asks with them; the text reply still works beside them.
    const interactions = interactionSupportOf(context.delivery);
    let chunks: AsyncIterable<RunStreamChunk> | undefined;
    let resumedRunId: string | undefined;
    if (context.event.event_type === INTERACTION_SUBMITTED_EVENT || context.input.interaction != null) {
      const answered = await submittedInteraction({
        interaction: context.input.interaction,
        waiting: typeof waiting === "string" && waiting.length > 0 ? waiting : undefined,
        getRun: (id) => this.runtime.getRun(id),
        support: interactions,
      });
      if ("results" in answered) {
        for (const body of answered.results) queue.push(body);
        return;
      }
      resumedRunId = answered.resume.runId;
      chunks = this.runtime.stream({ ...answered.resume, signal });
    } else if (typeof waiting === "string" && waiting.length > 0) {
      resumedRunId = waiting;
      const decisions = await this.decisionsFor(waiting, context);
      if (decisions) chunks = this.runtime.stream({ runId: waiting, decisions, signal });
    }
    const traceContext = traceContextOfRun(context);
    const steering = context.context.available_apis.steering_pull ? steeringFrom(api) : undefined;
    chunks ??= this.runtime.stream({
      agentId: agent.id,
      inputText: inputTextOf(context),
      sessionId: sessionIdOf(agent.id, context),
      metadata: { host_run_id: context.run_id, host_event_id: context.event.event_id },
      signal,
      // The host's span, so a tracing event bus makes this run's span its child across the process boundary.
      ...(traceContext ? { traceContext } : {}),
      ...(steering ? { steering } : {}),
    });
    const mapper = new KeelResultMapper({
      streaming,
      suspensionScope: scope,
      ...(resumedRunId ? { resumedRunId } : {}),
      ...(interactions ? { interactions } : {}),
      // A profile that drops artifacts must not send their files: the host would hold them for nothing.
      ...(profileCarriesResult({ type: "artifact.created" }, this.profile)
        ? { sendFile: (bytes, { extension }) => sendFile(channel, bytes, { extension, signal }) }
        : {}),
    });
    for await (const chunk of chunks) for (const body of await mapper.map(chunk)) queue.push(body);
  }

  /**
   * The decisions an event makes on a suspended run, or null when it makes none — then the waiting run is
   * cancelled and the event starts a new one.
   */
  private async decisionsFor(runId: string, context: AgentRunContext): Promise<ToolDecision[] | null> {
    const record = await this.runtime.getRun(runId);
    if (record?.status !== "waiting") return null;
    const given = context.event.data.decisions;
    if (Array.isArray(given)) {
      return given.flatMap((decision) => {
        const entry = decision as { tool_call_id?: unknown; toolCallId?: unknown; action?: unknown };
        const id = entry.tool_call_id ?? entry.toolCallId;
        return typeof id === "string" && (entry.action === "approve" || entry.action === "deny")
          ? [{ toolCallId: id, action: entry.action } satisfies ToolDecision]
          : [];
      });
    }
    const text = context.input.text ?? "";
    const action = APPROVE.test(text) ? "approve" : DENY.test(text) ? "deny" : undefined;
    if (!action) {
      await this.runtime.cancelRun(runId, { reason: "a new event arrived instead of a decision" });
      return null;
    }
    return record.pendingToolCalls.map((call) => ({ toolCallId: call.toolCallId, action }));
  }

  private bridgeFor(api: HostRunApi, context: AgentRunContext): HostBridge {
    return {
      streamModel: (request, modelId) =>
        streamHostModel(api, request, modelId ?? context.resources.models[0]?.model_id),
      callTool: async (toolName, parameters, signal) => {
        const answer = await api.tools.call(toolName, parameters, signal);
        return answer.result ?? answer.tool_response ?? null;
      },
      retrieveKnowledge: async (kbId, query, options) => {
        const id = kbId ?? context.resources.knowledge_bases[0]?.kb_id;
        if (id === undefined) throw new ConfigError("the host granted this run no knowledge base");
        const answer = await api.knowledge.retrieve(id, query, options);
        return Array.isArray(answer.results) ? answer.results : [];
      },
    };
  }

  private manifestOf(agent: RunnerAgent): AgentRunnerManifest | undefined {
    const hostModel =
      typeof agent.llm === "object" &&
      agent.llm !== null &&
      (agent.llm as { provider?: unknown }).provider === "host";
    const toolTypes = new Set((agent.tools ?? []).map((tool) => (tool as { type?: unknown }).type));
    const hostTools = toolTypes.has("host_tool");
    const hostKnowledge = toolTypes.has("host_knowledge");
    const parsed = AgentRunnerManifestSchema.safeParse({
      id: formatRunnerId({
        pluginAuthor: this.pluginAuthor,
        pluginName: this.pluginName,
        runnerName: agent.id,
      }),
      name: agent.id,
      label: { en_US: agent.name },
      ...(agent.description ? { description: { en_US: agent.description } } : {}),
      capabilities: {
        streaming: true,
        tool_calling: hostTools,
        knowledge_retrieval: hostKnowledge,
        interrupt: true,
        stateful_session: true,
        // Messages the host steers into a run join it before its next model call.
        steering: true,
        // A suspended run asks its decisions as the host's interactions where the platform shows them.
        interactions: true,
      },
      permissions: {
        models: hostModel ? ["invoke", "stream"] : [],
        tools: hostTools ? ["detail", "call"] : [],
        knowledge_bases: hostKnowledge ? ["retrieve"] : [],
        interactions: ["request"],
      },
      metadata: { runtime: "keel", agent_id: agent.id },
    });
    if (!parsed.success) {
      getLogger().warn(`agent ${agent.id} cannot be served as a runner: ${describeIssues(parsed.error)}`);
      return undefined;
    }
    return parsed.data;
  }
}

async function* streamHostModel(
  api: HostRunApi,
  request: ModelRequest,
  modelId: string | undefined,
): AsyncIterable<ModelStreamPart> {
  if (modelId === undefined) {
    yield {
      type: "error",
      errorType: "unknown",
      error: new ConfigError("the host granted this run no model"),
    };
    return;
  }
  const seen = new Set<string>();
  try {
    for await (const data of api.models.stream(modelId, toWireMessages(request), {
      funcs: toWireFunctions(request.tools),
      signal: request.signal,
    })) {
      const chunk = MessageChunkSchema.safeParse(data.chunk);
      if (!chunk.success)
        throw new KeelError(`the host's model sent a bad chunk: ${describeIssues(chunk.error)}`);
      yield* partsOfWireChunk(chunk.data, seen);
    }
  } catch (error) {
    yield {
      type: "error",
      errorType: "unknown",
      error: KeelError.isInstance(error) ? error : new KeelError(errorText(error)),
    };
    return;
  }
  yield { type: "finish", stopReason: seen.size > 0 ? "tool_use" : "end_turn", model: modelId };
}

/**
 * The text the agent is given: the event's own text; for the answer to an interaction, the answer; for any other
 * event without text, what happened.
 */
function inputTextOf(context: Pick<AgentRunContext, "input" | "event">): string {
  const text = context.input.text;
  if (text) return text;
  if (context.input.interaction)
    return `[${context.event.event_type}] ${JSON.stringify(context.input.interaction)}`;
  return `[${context.event.event_type}] ${JSON.stringify(context.event.data)}`;
}

/**
 * A Keel run's steering source in a host run: before each model call it pulls what the host queued for the run,
 * each item one user message. A pull the host refuses (the run just ended, say) gives nothing rather than failing
 * a run that is ending anyway.
 */
function steeringFrom(api: HostRunApi): (signal: AbortSignal) => Promise<string[]> {
  return async (signal) => {
    if (signal.aborted) return [];
    try {
      const items = await api.steering.pull("all");
      return items.map((item) => inputTextOf(item));
    } catch (error) {
      if (!(error instanceof AgentApiError)) throw error;
      getLogger().warn(`run ${api.runId}: a steering pull was refused: ${error.message}`);
      return [];
    }
  };
}

/** One Keel session per agent and host conversation (and thread), so the agent remembers the conversation. */
function sessionIdOf(agentId: string, context: AgentRunContext): string | undefined {
  const conversation = context.conversation?.conversation_id ?? context.context.conversation_id;
  if (!conversation) return undefined;
  const thread = context.conversation?.thread_id ?? context.context.thread_id;
  return `host:${agentId}:${conversation}${thread ? `:${thread}` : ""}`;
}

/**
 * Where a suspended run's id is kept: the conversation's state, so each conversation of a binding waits on its own
 * run — when the run has a conversation and the host keeps that scope for it, which the host shows by its
 * snapshot (a host seeds an enabled conversation scope with `external.conversation_id`). Otherwise the runner
 * scope, shared by the binding: a suspension is still resumed, by the binding's next event.
 */
function suspensionScopeOf(context: AgentRunContext): StateScope {
  const conversation = context.conversation?.conversation_id ?? context.context.conversation_id;
  return conversation && Object.keys(context.state.conversation).length > 0 ? "conversation" : "runner";
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
