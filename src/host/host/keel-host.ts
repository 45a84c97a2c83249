import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import type { LanguageModel } from "../../contracts/language-model.js";
import type { RunTraceContext } from "../../contracts/run-types.js";
import { activeTraceContext } from "../../events/active-trace-context.js";
import { getLogger } from "../../logging/logger.js";
import { RUNNER_ACTIONS } from "../runner/keel-runner.js";
import { ActionChannel, type ChannelProblem } from "../transport/action-channel.js";
import {
  ActionCallTimeoutError,
  CHANNEL_ERROR_CODES,
  ChannelBusyError,
  ChannelClosedError,
} from "../transport/channel-errors.js";
import { DEFAULT_HEARTBEAT, type HeartbeatOptions } from "../transport/channel-heartbeat.js";
import { receiveFiles } from "../transport/file-transfer.js";
import { type ReconnectPolicy, reconnectDelayMs, reconnectPolicyOf } from "../transport/reconnect-policy.js";
import { createStdioTransport } from "../transport/stdio-transport.js";
import type { MessageTransport } from "../transport/transport.js";
import { createWebSocketTransport, openWebSocket } from "../transport/websocket-transport.js";
import { AGENT_API_ERROR_CODES } from "../wire/api-error.js";
import { type AgentRunResult, RUN_FAILURE_CODES } from "../wire/run-result.js";
import {
  type AgentBindingInput,
  AgentBindingSchema,
  type AgentEventEnvelopeInput,
  AgentEventEnvelopeSchema,
} from "./agent-binding.js";
import type { HostStores } from "./host-stores.js";
import { createInMemoryHostStores } from "./in-memory-host-stores.js";
import type { KnowledgeBase, RerankModel } from "./knowledge-base.js";
import type { HostFile } from "./resource-answers.js";
import { ResultApplier } from "./result-applier.js";
import { type HostTool, RunApiProxy } from "./run-api-proxy.js";
import { buildRunContext, deadlineOf } from "./run-context-builder.js";
import {
  computeRunGrant,
  type HostResourceIndex,
  type RunGrant,
  type RunSession,
  stateKeysOf,
} from "./run-session.js";
import { discoverRunners, type RunnerDescriptor } from "./runner-registry.js";

export interface KeelHostOptions {
  stores?: HostStores;
  /** The models runners may be granted, by id. */
  models?: Record<string, LanguageModel>;
  /** The tools runners may be granted, by name. */
  tools?: Record<string, HostTool>;
  /** The knowledge bases runners may be granted, each under its own id. */
  knowledgeBases?: readonly KnowledgeBase[];
  /** The rerank models runners may be granted, by id; they are models, granted like the others. */
  rerankModels?: Record<string, RerankModel>;
  /** Files runners may be granted and read (`get_file`), by id. */
  files?: Record<string, HostFile>;
  /**
   * The heartbeat with each runtime: a `__ping` every `intervalMs`, the runtime lost after `missLimit` missed.
   * Every 20 s with 3 missed by default for `attachProcess` and `attachWebSocket`; `attach` only when given here
   * or in its own options; `false` turns it off.
   */
  heartbeat?: HeartbeatOptions | false;
  /**
   * The deployment's part of the grant's third layer, what the event's actor may use: it gets the grant already
   * narrowed to the run's scope (the binding's bot or workspace, the event's own conversation, workspace and
   * target) and returns it narrowed further.
   */
  authorize?: (grant: RunGrant, event: ReturnType<typeof AgentEventEnvelopeSchema.parse>) => RunGrant;
  approvePlatformAction?: (request: { runId: string; action: string; payload: unknown }) => Promise<boolean>;
  /** How long a cancelled run may take to end on its own before the host ends it; 5 s. */
  cancelGraceMs?: number;
  /** Where warnings go (a left-out runner, a dropped result); Keel's logger by default. */
  onWarning?: (message: string) => void;
}

/** What one `host.run` may say besides its event and binding. */
export interface HostRunOptions {
  /**
   * The trace the run joins (W3C `traceparent`, `tracestate`), sent to the runner in the run context's
   * `runtime.metadata`. By default the span active where the run is iterated, when `@opentelemetry/api` is
   * installed; none otherwise.
   */
  traceContext?: RunTraceContext;
}

/** How `attachWebSocket` behaves when the connection drops. */
export interface WebSocketAttachOptions {
  /** Backoff of the reconnect attempts (100 ms doubling to 10 s, half jittered, unlimited); `false`: none. */
  reconnect?: Partial<ReconnectPolicy> | false;
  /** After each reconnect, once the runtime's runners are discovered again. */
  onReconnect?: (runtime: AttachedRuntime) => void;
}

/** A plugin runtime the host is attached to. */
export interface AttachedRuntime {
  /** The current connection's channel; a reconnected runtime gets a new one. */
  channel: ActionChannel;
  /** The process id, for a runtime the host spawned. */
  pid?: number;
  runners: RunnerDescriptor[];
  close(): Promise<void>;
}

const PROBLEM_CODES: Record<string, string> = {
  malformed_message: AGENT_API_ERROR_CODES.INVALID_ARGUMENT,
  unknown_response: AGENT_API_ERROR_CODES.INVALID_ARGUMENT,
  bad_frame: AGENT_API_ERROR_CODES.INVALID_ARGUMENT,
  message_too_large: AGENT_API_ERROR_CODES.PAYLOAD_TOO_LARGE,
  too_many_fragments: AGENT_API_ERROR_CODES.PAYLOAD_TOO_LARGE,
  too_many_in_flight: AGENT_API_ERROR_CODES.RATE_LIMITED,
};

/**
 * Keel as a host of runners: attach plugin runtimes (spawned over stdio, or over WebSocket), discover their
 * runners, and run them on events — `host.run(event, binding)` streams the run's results while the host applies
 * state and artifacts, keeps the transcript, serves the runner's API calls against the run's grant and audits
 * each one, enforces the deadline and cancels on request. The run is always unregistered when it ends.
 */
export class KeelHost {
  readonly stores: HostStores;
  private readonly sessions = new Map<string, RunSession>();
  private readonly runners = new Map<string, RunnerDescriptor>();
  private readonly runtimes = new Set<AttachedRuntime>();
  private readonly cancels = new Map<string, AbortController>();
  private readonly proxy: RunApiProxy;
  private readonly resources: HostResourceIndex;
  private readonly warn: (message: string) => void;

  constructor(private readonly options: KeelHostOptions = {}) {
    this.stores = options.stores ?? createInMemoryHostStores();
    const models = new Map(Object.entries(options.models ?? {}));
    const tools = new Map(Object.entries(options.tools ?? {}));
    const rerankModels = new Map(Object.entries(options.rerankModels ?? {}));
    const knowledgeBases = new Map((options.knowledgeBases ?? []).map((base) => [base.id, base]));
    const files = new Map(Object.entries(options.files ?? {}));
    this.resources = {
      models: new Map<string, { model_type?: string; provider?: string }>([
        ...[...models].map(([id, model]) => [id, { provider: model.provider }] as const),
        ...[...rerankModels].map(
          ([id, model]) =>
            [id, { model_type: "rerank", ...(model.provider ? { provider: model.provider } : {}) }] as const,
        ),
      ]),
      tools: new Map(
        [...tools].map(([name, tool]) => [
          name,
          {
            ...(tool.description ? { description: tool.description } : {}),
            ...(tool.parameters ? { parameters: tool.parameters } : {}),
          },
        ]),
      ),
      knowledgeBases: new Map(
        [...knowledgeBases].map(([id, base]) => [
          id,
          { name: base.name, ...(base.type ? { type: base.type } : {}) },
        ]),
      ),
      files: new Map(
        [...files].map(([id, file]) => [
          id,
          {
            kind: file.kind,
            ...(file.name ? { name: file.name } : {}),
            ...(file.mimeType ? { mime_type: file.mimeType } : {}),
          },
        ]),
      ),
    };
    this.proxy = new RunApiProxy({
      sessions: this.sessions,
      stores: this.stores,
      models,
      tools,
      knowledgeBases,
      rerankModels,
      files,
      ...(options.approvePlatformAction ? { approvePlatformAction: options.approvePlatformAction } : {}),
    });
    this.warn = options.onWarning ?? ((message) => getLogger().warn(message));
  }

  /** Attaches a plugin runtime on a transport and discovers its runners. */
  async attach(
    transport: MessageTransport,
    options: { onClose?: () => void; heartbeat?: HeartbeatOptions | false } = {},
  ): Promise<AttachedRuntime> {
    const heartbeat = options.heartbeat ?? this.options.heartbeat;
    const runtime: AttachedRuntime = {
      channel: undefined as unknown as ActionChannel,
      runners: [],
      close: async () => {
        await runtime.channel.close();
        options.onClose?.();
      },
    };
    const channel = this.connect(runtime, transport);
    void channel.whenClosed().then(() => this.detach(runtime, options.onClose));
    await this.refresh(runtime);
    // From the first answer on: a runtime still starting up has not missed anything yet.
    if (heartbeat) channel.startHeartbeat(heartbeat);
    return runtime;
  }

  /** Spawns a plugin runtime (a runner process) and attaches it over its stdio. */
  async attachProcess(
    command: string,
    args: readonly string[],
    options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
  ): Promise<AttachedRuntime> {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "inherit"],
    });
    child.stdin.on("error", () => {});
    const transport = createStdioTransport({ input: child.stdout, output: child.stdin });
    try {
      const runtime = await this.attach(transport, {
        onClose: () => child.kill(),
        heartbeat: this.realHeartbeat(),
      });
      if (child.pid !== undefined) runtime.pid = child.pid;
      return runtime;
    } catch (error) {
      child.kill();
      throw error;
    }
  }

  /**
   * Connects to a plugin runtime listening over WebSocket and attaches it. When the connection drops, the runs
   * on it fail at once (`runner.channel_lost`, retryable) and the host reconnects with bounded, jittered backoff,
   * then discovers the runtime's runners again; a run started while it is away fails the same way. `reconnect:
   * false` makes a drop final, as on stdio.
   */
  async attachWebSocket(url: string, options: WebSocketAttachOptions = {}): Promise<AttachedRuntime> {
    const policy = options.reconnect === false ? undefined : reconnectPolicyOf(options.reconnect);
    const socket = await openWebSocket(url);
    const heartbeat = this.realHeartbeat();
    if (!policy) return this.attach(createWebSocketTransport(socket), { heartbeat });
    let stopped = false;
    let wake: (() => void) | undefined;
    const runtime: AttachedRuntime = {
      channel: undefined as unknown as ActionChannel,
      runners: [],
      close: async () => {
        stopped = true;
        wake?.();
        await runtime.channel.close();
      },
    };
    const reconnect = async (error: Error | undefined) => {
      if (stopped) return this.detach(runtime);
      this.warn(`plugin runtime at ${url}: connection lost (${error?.message ?? "closed"}); reconnecting`);
      for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, reconnectDelayMs(attempt, policy));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        if (stopped) return this.detach(runtime);
        let next: WebSocket;
        try {
          next = await openWebSocket(url);
        } catch {
          continue;
        }
        if (stopped) {
          next.terminate();
          return this.detach(runtime);
        }
        const channel = this.connect(runtime, createWebSocketTransport(next));
        watch(channel);
        try {
          await this.refresh(runtime);
          if (heartbeat) channel.startHeartbeat(heartbeat);
        } catch (reason) {
          // The new channel's own close, if that is why, starts the next round.
          this.warn(`plugin runtime at ${url}: discovery after reconnecting failed: ${String(reason)}`);
        }
        options.onReconnect?.(runtime);
        return;
      }
      this.warn(`plugin runtime at ${url}: gave up reconnecting after ${policy.maxAttempts} attempts`);
      this.detach(runtime);
    };
    const watch = (channel: ActionChannel) =>
      void channel.whenClosed().then((error) => (channel === runtime.channel ? reconnect(error) : undefined));
    const channel = this.connect(runtime, createWebSocketTransport(socket));
    watch(channel);
    await this.refresh(runtime);
    // From the first answer on, as in `attach`; a reconnected channel starts its own after discovery.
    if (heartbeat) channel.startHeartbeat(heartbeat);
    return runtime;
  }

  private realHeartbeat(): HeartbeatOptions | false {
    return this.options.heartbeat ?? DEFAULT_HEARTBEAT;
  }

  /** Asks every attached runtime for its runners again. */
  async discover(): Promise<RunnerDescriptor[]> {
    // A runtime that is away (reconnecting) keeps the runners it had until it is back.
    for (const runtime of this.runtimes) if (!runtime.channel.closed) await this.refresh(runtime);
    return this.listRunners();
  }

  listRunners(): RunnerDescriptor[] {
    return [...this.runners.values()];
  }

  /**
   * Runs the binding's runner on an event and streams its results. Never throws for a run's failure: every way a
   * run can end — the runner's own failure, an unknown runner, a lost channel, a passed deadline, a cancel — is a
   * final `run.failed`.
   */
  async *run(
    eventInput: AgentEventEnvelopeInput,
    bindingInput: AgentBindingInput,
    options: HostRunOptions = {},
  ): AsyncIterable<AgentRunResult> {
    const event = AgentEventEnvelopeSchema.parse(eventInput);
    const binding = AgentBindingSchema.parse(bindingInput);
    const runId = randomUUID();
    const fail = (code: string, error: string, retryable = false): AgentRunResult => ({
      run_id: runId,
      type: "run.failed",
      data: { code, error, retryable },
      timestamp: Math.floor(Date.now() / 1000),
    });
    if (!binding.enabled) return yield fail("binding.disabled", `binding ${binding.binding_id} is disabled`);
    if (!this.runners.has(binding.runner_id)) await this.discover();
    const runner = this.runners.get(binding.runner_id);
    if (!runner)
      return yield fail(RUN_FAILURE_CODES.NOT_FOUND, `no attached runtime serves ${binding.runner_id}`);
    const now = Date.now() / 1000;
    const deadlineAt = deadlineOf(binding, now);
    const grant = computeRunGrant({
      manifest: runner.manifest,
      binding,
      event,
      resources: this.resources,
      authorize: this.options.authorize,
    });
    const stateKeys = stateKeysOf(runner.id, binding, event);
    const context = await buildRunContext({
      runId,
      event,
      binding,
      manifest: runner.manifest,
      grant,
      resources: this.resources,
      stateKeys,
      stores: this.stores,
      deadlineAt,
      hostVersion: "keel",
      traceContext: options.traceContext ?? (await activeTraceContext()),
    });
    const session: RunSession = {
      runId,
      runnerId: runner.id,
      pluginIdentity: `${runner.address.pluginAuthor}/${runner.address.pluginName}`,
      channel: runner.channel,
      permissions: runner.manifest.permissions,
      binding,
      event,
      grant,
      stateKeys,
      deadlineAt,
      calls: 0,
      startedAt: now,
    };
    this.sessions.set(runId, session);
    const cancel = new AbortController();
    this.cancels.set(runId, cancel);
    const applier = new ResultApplier({ ...session, stores: this.stores, warn: this.warn });
    let iterator: AsyncIterator<Record<string, unknown>> | undefined;
    try {
      await applier.recordEvent();
      // Opening the stream sends the request, so a channel that is away (reconnecting) or full fails here.
      iterator = runner.channel
        .stream(
          runner.runAction,
          {
            plugin_author: runner.address.pluginAuthor,
            plugin_name: runner.address.pluginName,
            runner_name: runner.address.runnerName,
            context,
          },
          { timeoutMs: deadlineAt === null ? 300_000 : Math.max(1, (deadlineAt - now) * 1000 + 1000) },
        )
        [Symbol.asyncIterator]();
      let pending: Promise<IteratorResult<Record<string, unknown>>> | undefined;
      let graceUntil: number | undefined;
      for (;;) {
        pending ??= iterator.next();
        const waitMs = Math.min(
          deadlineAt === null ? Number.POSITIVE_INFINITY : deadlineAt * 1000 - Date.now(),
          graceUntil === undefined ? Number.POSITIVE_INFINITY : graceUntil - Date.now(),
        );
        const outcome = await raceNext(pending, waitMs, graceUntil === undefined ? cancel.signal : undefined);
        if (outcome === "cancelled") {
          void runner.channel
            .call(RUNNER_ACTIONS.CANCEL, { run_id: runId }, { timeoutMs: 5_000 })
            .catch(() => {});
          graceUntil = Date.now() + (this.options.cancelGraceMs ?? 5_000);
          continue;
        }
        if (outcome === "timeout") {
          void runner.channel
            .call(RUNNER_ACTIONS.CANCEL, { run_id: runId }, { timeoutMs: 5_000 })
            .catch(() => {});
          if (graceUntil !== undefined)
            return yield fail(RUN_FAILURE_CODES.CANCELLED, "the run was cancelled");
          return yield fail(RUN_FAILURE_CODES.TIMEOUT, "the run passed its deadline", true);
        }
        pending = undefined;
        if (outcome.done)
          return yield fail(
            RUN_FAILURE_CODES.PROTOCOL,
            "the runner's stream ended without run.completed or run.failed",
          );
        const result = await applier.apply(outcome.value);
        if (result === undefined) continue;
        yield result;
        if (result.type === "run.completed" || result.type === "run.failed") return;
      }
    } catch (error) {
      if (error instanceof ChannelClosedError)
        yield fail(RUN_FAILURE_CODES.CHANNEL_LOST, `the runner's channel was lost: ${error.message}`, true);
      else if (error instanceof ActionCallTimeoutError)
        yield fail(RUN_FAILURE_CODES.TIMEOUT, "the runner stopped answering", true);
      else if (error instanceof ChannelBusyError) yield fail(CHANNEL_ERROR_CODES.BUSY, error.message, true);
      else yield fail(RUN_FAILURE_CODES.RUNNER_ERROR, error instanceof Error ? error.message : String(error));
    } finally {
      this.sessions.delete(runId);
      this.cancels.delete(runId);
      void iterator?.return?.();
    }
  }

  /** Asks a run in flight to stop; it ends `run.failed {code: "cancelled"}`. False when no such run is in flight. */
  cancel(runId: string): boolean {
    const controller = this.cancels.get(runId);
    controller?.abort();
    return controller !== undefined;
  }

  /** The ids of the runs in flight. */
  activeRuns(): string[] {
    return [...this.sessions.keys()];
  }

  async close(): Promise<void> {
    await Promise.all([...this.runtimes].map((runtime) => runtime.close()));
  }

  /** Opens the action channel of a runtime's (new) connection and serves the runner API on it. */
  private connect(runtime: AttachedRuntime, transport: MessageTransport): ActionChannel {
    const channel = new ActionChannel({ transport, onProblem: (problem) => this.onProblem(problem) });
    this.proxy.attach(channel);
    // Runners may send the host a file (a stored value too large for one request) before naming it in a call.
    receiveFiles(channel);
    runtime.channel = channel;
    this.runtimes.add(runtime);
    return channel;
  }

  /** Forgets a runtime for good: its runners are no longer served. */
  private detach(runtime: AttachedRuntime, onClose?: () => void): void {
    if (!this.runtimes.delete(runtime)) return;
    for (const runner of runtime.runners)
      if (this.runners.get(runner.id) === runner) this.runners.delete(runner.id);
    onClose?.();
  }

  private async refresh(runtime: AttachedRuntime): Promise<void> {
    const found = await discoverRunners(runtime.channel, this.warn);
    for (const runner of runtime.runners)
      if (this.runners.get(runner.id) === runner) this.runners.delete(runner.id);
    runtime.runners = found;
    for (const runner of found) this.runners.set(runner.id, runner);
  }

  private onProblem(problem: ChannelProblem): void {
    if (problem.kind === "noise") return;
    this.warn(`plugin runtime: ${problem.kind}: ${problem.message}`);
    void this.stores.audit.record({
      at: Date.now(),
      run_id: null,
      runner_id: null,
      action: problem.action ?? "(transport)",
      resource: problem.seqId === undefined ? null : `seq_id:${problem.seqId}`,
      scope: null,
      result: PROBLEM_CODES[problem.kind] ?? AGENT_API_ERROR_CODES.INVALID_ARGUMENT,
      detail: `${problem.kind}: ${problem.message}`,
    });
  }
}

/** The next result, or `timeout` once `waitMs` pass, or `cancelled` when `signal` aborts first. */
async function raceNext<T>(
  next: Promise<T>,
  waitMs: number,
  signal: AbortSignal | undefined,
): Promise<T | "timeout" | "cancelled"> {
  if (signal?.aborted) return "cancelled";
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const racers: Promise<T | "timeout" | "cancelled">[] = [next];
  if (Number.isFinite(waitMs))
    racers.push(
      new Promise((resolve) => (timer = setTimeout(() => resolve("timeout"), Math.max(0, waitMs)))),
    );
  if (signal) {
    racers.push(
      new Promise((resolve) => {
        onAbort = () => resolve("cancelled");
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    );
  }
  try {
    return await Promise.race(racers);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}
