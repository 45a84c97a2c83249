import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { WebSocket } from "ws";
import type { LanguageModel } from "../../contracts/language-model.js";
import type { RunTraceContext } from "../../contracts/run-types.js";
import { getLogger } from "../../logging/logger.js";
import { ActionChannel, type ChannelProblem } from "../transport/action-channel.js";
import { DEFAULT_HEARTBEAT, type HeartbeatOptions } from "../transport/channel-heartbeat.js";
import { receiveFiles } from "../transport/file-transfer.js";
import { type ReconnectPolicy, reconnectDelayMs, reconnectPolicyOf } from "../transport/reconnect-policy.js";
import { createStdioTransport } from "../transport/stdio-transport.js";
import type { MessageTransport } from "../transport/transport.js";
import { createWebSocketTransport, openWebSocket } from "../transport/websocket-transport.js";
import { AGENT_API_ERROR_CODES } from "../wire/api-error.js";
import type { InteractionSubmissionInput } from "../wire/interaction.js";
import { nowSeconds } from "../wire/now-seconds.js";
import type { AgentRunResult } from "../wire/run-result.js";
import {
  type AgentBindingInput,
  AgentBindingSchema,
  type AgentEventEnvelope,
  type AgentEventEnvelopeInput,
  AgentEventEnvelopeSchema,
} from "./agent-binding.js";
import { hostResourceIndex } from "./host-resource-index.js";
import { type HostRunDeps, streamHostRun } from "./host-run.js";
import type { HostStores } from "./host-stores.js";
import { createInMemoryHostStores } from "./in-memory-host-stores.js";
import type { KnowledgeBase, RerankModel } from "./knowledge-base.js";
import { type PendingInteraction, PendingInteractions } from "./pending-interactions.js";
import type { HostFile } from "./resource-answers.js";
import { type HostTool, RunApiProxy } from "./run-api-proxy.js";
import { InMemoryRunLedger, type RunLedger } from "./run-ledger.js";
import type { HostResourceIndex, RunGrant, RunSession } from "./run-session.js";
import { discoverRunners, type RunnerDescriptor } from "./runner-registry.js";
import { servePulls, steeringItemOf } from "./serve-pulls.js";
import { serveRunLedger } from "./serve-run-ledger.js";

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
  /** The run ledger; one in memory (the newest 10,000 runs) by default. */
  ledger?: RunLedger;
  /**
   * Told of each interaction a runner asks for (`interaction.requested`), checked and kept: show it to the user and
   * pass the answer to `submitInteraction`.
   */
  onInteraction?: (interaction: PendingInteraction) => void;
  /** Told, when a run ends, of the follow-up inputs given with `steer` that its runner never pulled. */
  onUnclaimedSteering?: (runId: string, events: AgentEventEnvelope[]) => void;
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
  private readonly interactions = new PendingInteractions();
  private readonly runDeps: HostRunDeps;
  /** The host's record of its runs and their results; runners read their own through the proxy. */
  readonly ledger: RunLedger;

  constructor(private readonly options: KeelHostOptions = {}) {
    this.stores = options.stores ?? createInMemoryHostStores();
    const models = new Map(Object.entries(options.models ?? {}));
    const tools = new Map(Object.entries(options.tools ?? {}));
    const rerankModels = new Map(Object.entries(options.rerankModels ?? {}));
    const knowledgeBases = new Map((options.knowledgeBases ?? []).map((base) => [base.id, base]));
    const files = new Map(Object.entries(options.files ?? {}));
    this.resources = hostResourceIndex({ models, tools, rerankModels, knowledgeBases, files });
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
    this.ledger = options.ledger ?? new InMemoryRunLedger();
    this.runDeps = {
      sessions: this.sessions,
      findRunner: async (runnerId) => {
        if (!this.runners.has(runnerId)) await this.discover();
        return this.runners.get(runnerId);
      },
      resources: this.resources,
      stores: this.stores,
      ledger: this.ledger,
      interactions: this.interactions,
      authorize: options.authorize,
      onInteraction: options.onInteraction,
      onUnclaimedSteering: options.onUnclaimedSteering,
      cancelGraceMs: options.cancelGraceMs ?? 5_000,
      warn: this.warn,
    };
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
    const cancel = new AbortController();
    this.cancels.set(runId, cancel);
    try {
      yield* streamHostRun(this.runDeps, {
        runId,
        event,
        binding,
        cancel,
        traceContext: options.traceContext,
      });
    } finally {
      this.cancels.delete(runId);
    }
  }

  /**
   * Gives a run in flight a follow-up input — a message that arrived for its conversation while it runs — for the
   * runner to pull (`steering_pull`) between its steps. Only a runner that declares the `steering` capability
   * gets any; false when the run is not in flight or its runner does not steer. Inputs the run never pulled go
   * to `onUnclaimedSteering` when it ends, so the application can start a run with them.
   */
  steer(runId: string, eventInput: AgentEventEnvelopeInput): boolean {
    const session = this.sessions.get(runId);
    if (!session?.availableApis.steering_pull) return false;
    const event = AgentEventEnvelopeSchema.parse(eventInput);
    session.steering.push({ event, item: steeringItemOf(session, event) });
    return true;
  }

  /** The run in flight for a conversation (the newest, when there are several), to steer a follow-up into. */
  activeRunOf(conversationId: string): string | undefined {
    let found: string | undefined;
    for (const session of this.sessions.values())
      if (session.event.conversation_id === conversationId) found = session.runId;
    return found;
  }

  /**
   * Answers an interaction a runner asked for: checks the answer against the request (once, before it expires)
   * and starts a new run of the same binding on the conversation, its event `interaction.submitted` and its
   * `input.interaction` the answer. Throws an {@link AgentApiError} (`not_found`, `invalid_argument`) when the
   * answer is refused, before any run starts; every answer, refused or not, is audited.
   */
  submitInteraction(
    runnerId: string,
    submission: InteractionSubmissionInput,
    options: HostRunOptions = {},
  ): AsyncIterable<AgentRunResult> {
    const [event, binding] = this.interactions.answer(this.stores, runnerId, submission);
    return this.run(event, binding, options);
  }

  /** The interactions waiting for the user's answer. */
  pendingInteractions(): PendingInteraction[] {
    return this.interactions.list(nowSeconds());
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
    servePulls(this.proxy, channel);
    serveRunLedger(this.proxy, channel, this.ledger);
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
