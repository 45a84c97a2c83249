import path from "node:path";
import { registerBuiltins } from "../builtins/register-builtins.js";
import { type AppConfig, COMPONENT_METHODS } from "../config/app-config-schema.js";
import type { KeelConfig } from "../config/keel-config.js";
import { loadConfig, parseConfig } from "../config/load-config.js";
import {
  agentIdOf,
  type RunRecord,
  type RunRequest,
  type RunResult,
  type RunStatus,
  type TerminationReason,
} from "../contracts/run-types.js";
import type { EventBus } from "../contracts/runtime-event.js";
import type { Tool } from "../contracts/tool.js";
import { ConfigError, RunNotCompletedError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import type { ToolDecision } from "../loop/decisions.js";
import { loadSuspension } from "../loop/resume/index.js";
import type { RuntimePlugin } from "../loop/runtime-plugin.js";
import { cancelledBy } from "../loop/termination.js";
import type { EffectivePolicy } from "../permissions/effective-policy.js";
import { policyForRun } from "../permissions/run-policy.js";
import { isPluginRef, loadPlugin } from "../plugins/load-plugin.js";
import { FanoutEventBus } from "../queue/fanout-event-bus.js";
import type { QueuedRun, QueuedRunDelivery, RunQueue, RunQueueConsumer } from "../queue/run-queue.js";
import type { SessionManager } from "../sessions/session-manager.js";
import type { SkillsManager } from "../skills/skills-manager.js";
import { type AgentAsToolOptions, agentAsTool } from "../tools/agent-as-tool.js";
import { newId } from "../util/new-id.js";
import { AgentCache, type AgentInfo, changedAgentIds, describeAgent } from "./agent-cache.js";
import { checkRunRequest } from "./check-run-request.js";
import { followAcrossNodes } from "./follow-across-nodes.js";
import { type LiveRun, LiveRuns } from "./live-runs.js";
import { executeQueuedRun, type QueuedRunHost } from "./queued-runs.js";
import { type ReadOptions, RunChunkIterator } from "./read-run-events.js";
import { agentOfCheckpoint, checkpointsOfRun } from "./run-checkpoints.js";
import { type DecideRequest, isDecideRequest, RunDecisions } from "./run-decisions.js";
import { type StartRunHost, startRun } from "./start-run.js";
import type { RunStreamChunkKind, RunStreamChunks } from "./stream-chunk.js";
import { checkStreamKinds } from "./stream-kinds.js";
import { submitDecisions, submitRun } from "./submit-run.js";

interface Components {
  eventBus: EventBus;
  sessionManager: SessionManager;
  skills: SkillsManager;
  runtime: RuntimePlugin;
  queue: RunQueue;
}

/**
 * Keel's one entry point: loads the config's components and agents, runs agents, streams their events, and
 * lets a host cancel, inspect and re-attach to runs.
 *
 * @example
 * const runtime = await Runtime.fromConfig("agent.json");
 * const answer = await runtime.run({ agentId: "assistant", inputText: "Hello" });
 */
export class Runtime {
  private config: AppConfig;
  private readonly configPath: string | undefined;
  private readonly baseDir: string;
  private components: Components | undefined;
  private readonly starting: Promise<Components>;
  /** Components the config gave as objects: their caller owns them, and `close()` leaves them open. */
  private readonly callerOwned = new Set<unknown>();
  private readonly agents: AgentCache;
  /** Named sessions that have run here (their ids only: one entry per conversation a server ever saw). */
  private readonly sessions = new Set<string>();
  private readonly liveRuns = new LiveRuns();
  private readonly decisions = new RunDecisions({
    store: () => this.ready().then(() => this.sessionManager),
    live: (runId) => this.liveRuns.get(runId),
    start: (request, decisions) => this.startRun(request, { decisions }),
  });
  private consumer: RunQueueConsumer | undefined;
  private readonly runHost: StartRunHost = {
    parts: () => (this.components ? Promise.resolve(this.components) : this.starting),
    agents: undefined as unknown as AgentCache,
    liveRuns: this.liveRuns,
    trackSession: (sessionId) => this.sessions.add(sessionId),
  };
  private configVersion = 1;
  private closed = false;

  constructor(config: KeelConfig | AppConfig, options: { configPath?: string; baseDir?: string } = {}) {
    registerBuiltins();
    this.config = parseConfig(config);
    this.configPath = options.configPath;
    this.baseDir = options.baseDir ?? (options.configPath ? path.dirname(options.configPath) : process.cwd());
    this.agents = new AgentCache({
      config: () => this.config,
      baseDir: this.baseDir,
      runtime: this,
      liveRuns: () => this.liveRuns.values(),
    });
    (this.runHost as { agents: AgentCache }).agents = this.agents;
    this.starting = this.start();
    this.starting.catch(() => {});
  }

  /**
   * A runtime from a config object (code-first), type-checked as `KeelConfig`. Besides refs, `session`, `events`
   * and `skills` may be the component itself (`session: myStore`): such a component belongs to the caller, who
   * closes it; `close()` leaves it open.
   */
  static async fromDict(config: KeelConfig, options: { baseDir?: string } = {}): Promise<Runtime> {
    const runtime = new Runtime(config, options);
    await runtime.ready();
    return runtime;
  }

  /** A runtime from an `agent.json` file (`${VAR}` expanded). */
  static async fromConfig(configPath: string): Promise<Runtime> {
    const loaded = await loadConfig(configPath);
    const runtime = new Runtime(loaded.config, { configPath: loaded.path, baseDir: loaded.baseDir });
    await runtime.ready();
    return runtime;
  }

  /** Resolves when the top-level components are loaded; rejects with their load error. */
  async ready(): Promise<void> {
    await this.starting;
  }

  private async start(): Promise<Components> {
    const baseDir = this.baseDir;
    const { events, session, skills: skillsRef, queue: queueRef } = this.config;
    for (const given of [events, session, skillsRef, queueRef])
      if (!isPluginRef(given)) this.callerOwned.add(given);
    const queue = await loadPlugin<RunQueue>("run_queue", queueRef, {
      baseDir,
      label: "queue",
      requiredMethods: COMPONENT_METHODS.queue,
    });
    const ownBus = await loadPlugin<EventBus>("event_bus", events, {
      baseDir,
      label: "events",
      requiredMethods: COMPONENT_METHODS.events,
    });
    // Run events go to the queue's fan-out too, so server nodes elsewhere can stream them.
    const eventBus = queue.fanout === undefined ? ownBus : new FanoutEventBus(ownBus, queue.fanout);
    if (this.callerOwned.has(ownBus)) this.callerOwned.add(eventBus);
    const sessionManager = await loadPlugin<SessionManager>("session", session, {
      baseDir,
      label: "session",
      requiredMethods: COMPONENT_METHODS.session,
    });
    const skills = await loadPlugin<SkillsManager>("skills", skillsRef, {
      baseDir,
      label: "skills",
      requiredMethods: COMPONENT_METHODS.skills,
    });
    const runtime = await loadPlugin<RuntimePlugin>("runtime", this.config.runtime, {
      baseDir,
      label: "runtime",
      requiredMethods: ["run"],
    });
    await runtime.initialize?.();
    this.components = { eventBus, sessionManager, skills, runtime, queue };
    // Without other processes to take them, this runtime executes what it queues itself.
    if (!queue.distributed) this.consumer = this.work();
    return this.components;
  }

  private get parts(): Components {
    if (!this.components) {
      throw new ConfigError("The runtime is still starting", {
        hint: "await runtime.ready() (or use Runtime.fromConfig)",
      });
    }
    return this.components;
  }

  get eventBus(): EventBus {
    return this.parts.eventBus;
  }

  get sessionManager(): SessionManager {
    return this.parts.sessionManager;
  }

  get skillsManager(): SkillsManager {
    return this.parts.skills;
  }

  /**
   * Run to completion and resolve with the final output, typed by `outputType` or the `output_type` of a
   * `defineAgent` agent given as `agentId` (else a string); any other stop reason rejects.
   */
  async run<T = string, TDeps = unknown>(request: RunRequest<T, TDeps>): Promise<T> {
    const result = await this.runDetailed(request);
    if (result.stopReason === "completed") return result.finalOutput as T;
    throw (
      result.exception ??
      new RunNotCompletedError<T>(
        `The run ended ${result.stopReason}${result.error ? `: ${result.error}` : ""}`,
        {
          result,
          hint: "Use runDetailed() to handle every stop reason",
        },
      )
    );
  }

  /** Run and resolve with the RunResult, whatever the run ends with. Rejects only for a request it cannot start. */
  async runDetailed<T = string, TDeps = unknown>(request: RunRequest<T, TDeps>): Promise<RunResult<T>> {
    const live = await this.startRun(request);
    return live.done as Promise<RunResult<T>>;
  }

  /**
   * Run and yield its events as they happen; the last chunk is `run.finished` with the RunResult. The run
   * starts at the first `next()`; a request that cannot start rejects there. Chunks are a union on `kind`.
   * `kinds` keeps only chunks of those kinds — and `run.finished`, which every stream ends with; a kind no chunk
   * has throws a `ConfigError` at once.
   *
   * Given `{ runId, decisions }` instead, it decides a waiting run as `decide()` does and yields what the run
   * does after the decisions — the `tool.decision` events among the first — to its `run.finished`, which says
   * whether it completed or waits again. A refused decision (`DecisionError`) rejects the first `next()`.
   *
   * @example
   * for await (const chunk of runtime.stream({ runId, decisions: [{ toolCallId, action: "approve" }] })) {
   *   if (chunk.kind === "run.finished") console.log(chunk.result.stopReason);
   * }
   */
  stream<T = string, TDeps = unknown, K extends RunStreamChunkKind = RunStreamChunkKind>(
    request: RunRequest<T, TDeps> | DecideRequest,
    options: { kinds?: readonly K[] } = {},
  ): AsyncIterableIterator<RunStreamChunks<T, K>> {
    checkStreamKinds(options.kinds);
    if (isDecideRequest(request)) {
      return this.decisions.stream(request, options) as AsyncIterableIterator<RunStreamChunks<T, K>>;
    }
    return new RunChunkIterator(
      () =>
        this.startRun(request).then((live) => {
          // A run refused before it started rejects its result and ends its log with the refusal; the stream
          // reports it, so the result's rejection is handled here.
          live.done.catch(noop);
          return live.log;
        }),
      options,
    ) as AsyncIterableIterator<RunStreamChunks<T, K>>;
  }

  /**
   * Replay a run's events after a sequence, then follow it live until it ends: nothing lost, nothing
   * twice, whether the run is live here, finished, or resumed in this process from the store. A run that waits
   * for decisions when `attach` is called is followed into the continuation the next decision in this process
   * starts, to that continuation's `run.finished` — a decision made right after `attach`, even before the first
   * `next()`, included; leave with `return()` (`break`) to stop waiting. `stream({ runId, decisions })` decides
   * and streams in one call.
   */
  attach<K extends RunStreamChunkKind = RunStreamChunkKind>(
    runId: string,
    options: ReadOptions<K> = {},
  ): AsyncIterableIterator<RunStreamChunks<unknown, K>> {
    checkStreamKinds(options.kinds);
    const live = this.liveRuns.get(runId);
    // A run going on here that started here holds its whole log: the plain cursor is enough.
    if (live !== undefined && !live.log.closed && live.log.firstSequence <= (options.afterSequence ?? 0) + 1)
      return new RunChunkIterator(live.log, options) as AsyncIterableIterator<RunStreamChunks<unknown, K>>;
    const fanout = this.components?.queue.fanout;
    // A run no process holds here may be running on a worker: its live events come through the fan-out.
    if (live === undefined && fanout !== undefined)
      return followAcrossNodes(runId, {
        ...options,
        fanout,
        store: this.ready().then(() => this.sessionManager),
      }) as AsyncIterableIterator<RunStreamChunks<unknown, K>>;
    return this.liveRuns.follow(runId, {
      ...options,
      store: this.ready().then(() => this.sessionManager),
    }) as AsyncIterableIterator<RunStreamChunks<unknown, K>>;
  }

  /**
   * Cancel a run that has not finished: one this process holds (created or running) through its cancel scope,
   * and a waiting one — which no process holds; it lives in the store — by ending it from its checkpoint, as
   * `cancelRun()` does. Resolves true when this call cancelled the run; false for a run that is unknown, already
   * finished or already cancelled (twice is harmless), or held by another process.
   */
  async cancel(runId: string, options: { reason?: string } = {}): Promise<boolean> {
    const live = this.liveRuns.get(runId);
    if (live !== undefined) return live.scope.cancel(cancelledBy(options.reason));
    const waiting = await this.cancelWaiting(runId, cancelledBy(options.reason));
    if (waiting !== null) return true;
    // A run another process executes (or will) is cancelled there.
    const { queue, sessionManager } = this.parts;
    const status = (await sessionManager.getRun(runId))?.status;
    if (queue.cancel === undefined || (status !== "created" && status !== "running")) return false;
    await queue.cancel(runId, options.reason);
    return true;
  }

  /**
   * Decide suspended tool calls, keyed by tool-call id, in a batch or one by one. The run is rebuilt from
   * its suspension checkpoint — in this process or any other with the same store — and goes on: decided calls
   * replay in the order the model issued them, and the run waits again if some are still undecided. Resolves
   * with the run's result when it finishes or suspends again. A decision for an unknown run or call, a run that
   * is not waiting, or a call already decided is refused with `DecisionError` and changes nothing; a repeated
   * `decisionId` is a no-op. A decision for a run still running in this process waits until its step suspends.
   * Aborting `signal` cancels the run once the decisions have set it going again.
   */
  decide(input: DecideRequest): Promise<RunResult> {
    return this.decisions.decide(input);
  }

  /**
   * Cancel a run: a live one as `cancel()` does, a waiting one by ending it from its checkpoint (the run's log
   * gets `run.cancelled` and `run.finished`, its record ends `cancelled`). Null for a run that is neither.
   */
  async cancelRun(runId: string, options: { reason?: string } = {}): Promise<RunResult | null> {
    const termination = cancelledBy(options.reason);
    const live = this.liveRuns.get(runId);
    if (live !== undefined) {
      live.scope.cancel(termination);
      return live.done;
    }
    return this.cancelWaiting(runId, termination);
  }

  /** End a waiting run from its suspension checkpoint, cancelled; null when the store says it is not waiting. */
  private async cancelWaiting(runId: string, termination: TerminationReason): Promise<RunResult | null> {
    await this.ready();
    const record = await this.sessionManager.getRun(runId);
    if (record?.status !== "waiting") return null;
    const waiting = await loadSuspension(this.sessionManager, runId);
    let started: LiveRun;
    try {
      started = await this.startRun(
        { agentId: record.agentId, inputText: "", resumeFromCheckpoint: waiting.checkpointId },
        { cancel: termination },
      );
    } catch (error) {
      // A decision resumed the run here meanwhile: it is cancelled where it runs.
      const live = this.liveRuns.get(runId);
      if (live === undefined) throw error;
      live.scope.cancel(termination);
      started = live;
    }
    return started.done;
  }

  private startRun(
    request: RunRequest,
    extras: { decisions?: readonly ToolDecision[]; cancel?: TerminationReason; startAfter?: number } = {},
  ): Promise<LiveRun> {
    if (this.closed) throw new ConfigError("The runtime is closed", { hint: "Create a new Runtime" });
    return startRun(this.runHost, request, extras);
  }

  /**
   * Resume from a checkpoint, in this or any other process with the same store: the run's latest
   * checkpoint continues the run itself; an earlier one branches a new run from that point.
   */
  async resume<T = unknown>(
    checkpointId: string,
    options: Omit<RunRequest<T>, "agentId" | "inputText" | "resumeFromCheckpoint"> = {},
  ): Promise<RunResult<T>> {
    await this.ready();
    const agentId = await agentOfCheckpoint(this.sessionManager, checkpointId);
    return this.runDetailed({ ...options, agentId, inputText: "", resumeFromCheckpoint: checkpointId });
  }

  /** Resume a run from its latest checkpoint: after a crash, or to pick up a run no process holds. */
  async resumeRun<T = unknown>(
    runId: string,
    options: Omit<RunRequest<T>, "agentId" | "inputText" | "resumeFromCheckpoint" | "runId"> = {},
  ): Promise<RunResult<T>> {
    const checkpoints = await this.listRunCheckpoints(runId);
    const latest = checkpoints[checkpoints.length - 1];
    if (latest === undefined) {
      throw new ConfigError(`Run '${runId}' has no checkpoint to resume from`, {
        code: ERROR_CODES.RUN_NOT_RESUMABLE,
        hint: "Durable runs (durable: true) checkpoint every step; other runs only when they suspend",
      });
    }
    return this.resume(latest, options);
  }

  /** The run queue (`queue` in the config; `in_process` by default: runs execute here). */
  get queue(): RunQueue {
    return this.parts.queue;
  }

  /**
   * Put a run on the queue and resolve with its id once it is queued (its record is stored as `created`): with
   * `bullmq` a `keel worker` executes it, durably; with `in_process`, this runtime does. Follow it with `attach`.
   */
  async submit(request: RunRequest): Promise<string> {
    checkRunRequest(request);
    const parts = await this.starting;
    const agentId = (await this.agents.resolve(agentIdOf(request.agentId))).id;
    const runId = request.runId ?? newId();
    const sessionId = request.sessionId ?? newId("session-");
    await submitRun(parts.sessionManager, parts.queue, { ...request, agentId, runId, sessionId });
    return runId;
  }

  /** Queue decisions on a waiting run (checked here first; `DecisionError` when refused); a worker applies them. */
  async submitDecisions(request: { runId: string; decisions: readonly ToolDecision[] }): Promise<RunRecord> {
    const parts = await this.starting;
    return submitDecisions(parts.sessionManager, parts.queue, request);
  }

  /** Take runs off the queue and execute them here, at most `concurrency` at a time (`keel worker`). */
  work(options: { concurrency?: number } = {}): RunQueueConsumer {
    const { queue, sessionManager } = this.parts;
    const host: QueuedRunHost = {
      store: sessionManager,
      fanout: queue.fanout,
      start: (request, startAfter, cancelled) =>
        this.startRun(request, {
          startAfter,
          ...(cancelled === undefined ? {} : { cancel: cancelledBy(cancelled) }),
        }).then((live) => live.done),
      cancelledBefore: (runId) => queue.cancelledBefore?.(runId) ?? Promise.resolve(undefined),
      decide: (runId, decisions) => this.decide({ runId, decisions }),
    };
    const handler = (run: QueuedRun, delivery: QueuedRunDelivery) => executeQueuedRun(host, run, delivery);
    const onCancel = (runId: string, reason: string | undefined) =>
      this.liveRuns.get(runId)?.scope.cancel(cancelledBy(reason));
    return queue.consume(handler, { concurrency: options.concurrency ?? 1, onCancel });
  }

  /**
   * Another agent of this runtime as a tool: one string argument (`argName`, default `task`) is the
   * child run's input and its final text the result. The child gets the parent's `functionInvocationKwargs` and
   * `parentRunId`; with `propagateSession` it runs in the parent's session, sharing its state, else in a fresh
   * one. A child that suspends suspends the call, and the decision on the call is forwarded to the child.
   */
  agentAsTool(agentId: string, options: AgentAsToolOptions = {}): Tool {
    return agentAsTool(this, agentId, options);
  }

  /** A run's checkpoint ids, oldest first. */
  async listRunCheckpoints(runId: string): Promise<string[]> {
    await this.ready();
    return checkpointsOfRun(this.sessionManager, runId);
  }

  /** A run's record, from this process or the store. */
  async getRun(runId: string): Promise<RunRecord | null> {
    await this.ready();
    return this.sessionManager.getRun(runId);
  }

  async listRuns(filter: { sessionId?: string; status?: RunStatus } = {}): Promise<RunRecord[]> {
    await this.ready();
    return this.sessionManager.listRuns(filter);
  }

  /** Runs this process is executing now. */
  liveRun(runId: string): LiveRun | undefined {
    return this.liveRuns.get(runId);
  }

  /**
   * Re-read the config file: agent definitions only (no hot swap of top-level components). Changed agents are
   * dropped as `invalidateAgent` drops them: resolves once their runs in flight have ended and what they opened
   * is closed.
   */
  async reload(): Promise<{ changedAgents: string[] }> {
    if (!this.configPath)
      throw new ConfigError("Cannot reload: no config path available", {
        hint: "Use Runtime.fromConfig(path)",
      });
    const { config } = await loadConfig(this.configPath);
    const changedAgents = changedAgentIds(this.config, config);
    this.config = config;
    await Promise.all(changedAgents.map((id) => this.invalidateAgent(id)));
    const oldVersion = this.configVersion++;
    this.eventBus.emit("config.reloaded", { oldVersion, newVersion: this.configVersion, changedAgents });
    return { changedAgents };
  }

  /** Re-read one agent's definition from the file and drop what was loaded for it. */
  async reloadAgent(agentId: string): Promise<void> {
    if (this.configPath) {
      const { config } = await loadConfig(this.configPath);
      const definition = config.agents.find((agent) => agent.id === agentId);
      if (!definition) await this.resolveAgentOrThrow(agentId);
      this.config = {
        ...this.config,
        agents: this.config.agents.map((agent) => (agent.id === agentId && definition ? definition : agent)),
      };
    } else {
      await this.resolveAgentOrThrow(agentId);
    }
    await this.invalidateAgent(agentId);
    this.eventBus.emit("agent.reloaded", { agentId });
  }

  private async resolveAgentOrThrow(agentId: string): Promise<void> {
    if (!this.config.agents.some((agent) => agent.id === agentId)) await this.agents.resolve(agentId);
  }

  /**
   * Drop the agent's loaded plugins and model client; the next run loads them again. What the old agent opened
   * (its memory, the tools its config entries loaded — an MCP toolset's pooled connections and servers —, its
   * tool executor) is closed once the runs already using it have ended, and this resolves then; tools and
   * executors given as objects in a code-first config are the caller's and stay open (the next load reuses
   * them).
   */
  async invalidateAgent(agentId: string): Promise<void> {
    await this.agents.invalidate(agentId);
  }

  /**
   * The agent's effective permission policy: every rule with its source and merge rule, and the decision
   * for each of its tools. With a `sessionId`, the skills that session has loaded take part, as in its next run.
   * A plain, JSON-serialisable value; loads the agent if needed.
   *
   * @example
   * const policy = await runtime.getEffectivePolicy("assistant");
   * policy.tools.delete_file; // { effect: "deny", rule: "destructive_not_enabled", source: "runtime", … }
   */
  async getEffectivePolicy(agentId: string, options: { sessionId?: string } = {}): Promise<EffectivePolicy> {
    await this.ready();
    const agent = await this.agents.resolve(agentId);
    if (agent.policy === undefined || agent.policyInput === undefined) {
      throw new ConfigError(`Agent '${agentId}' has no permission policy`, {
        hint: "Agents loaded from config always have one",
      });
    }
    const base = { policy: agent.policy, policyInput: agent.policyInput };
    if (options.sessionId === undefined) return structuredClone(agent.policy);
    const { skills, sessionManager } = this.parts;
    const summaries = await skills.prepareSession(options.sessionId, sessionManager);
    const state = await sessionManager.getState(options.sessionId);
    return structuredClone(policyForRun(base, summaries, state)!);
  }

  /** Sessions that have run an agent in this process. */
  activeSessionCount(): number {
    return this.sessions.size;
  }

  listAgents(): { id: string; name: string }[] {
    return this.config.agents.map((agent) => ({ id: agent.id, name: agent.name }));
  }

  /** What an agent is configured with and whether it is loaded; null for an unknown id. */
  getAgentInfo(agentId: string): AgentInfo | null {
    const definition = this.config.agents.find((agent) => agent.id === agentId);
    return definition === undefined ? null : describeAgent(definition, this.agents.has(agentId));
  }

  /** Forget a session's per-agent state in this process, then release its shared resources. */
  async closeSession(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId);
    await this.releaseSession(sessionId);
  }

  /** Free runtime-level resources tied to a session (pooled connections). Idempotent. */
  async releaseSession(sessionId: string): Promise<void> {
    await this.agents.releaseSession(sessionId);
  }

  /** Cancel live runs, wait for them, and close every component it loaded (not those its caller gave it). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.consumer?.stop();
    for (const live of this.liveRuns.values())
      live.scope.cancel({ type: "cancelled", value: "runtime closed" });
    await Promise.allSettled([...this.liveRuns.values()].map((live) => live.done));
    const parts = await this.starting.catch(() => undefined);
    await this.agents.closeAll();
    if (!parts) return;
    await parts.runtime.close?.();
    const owned = (component: unknown) => !this.callerOwned.has(component);
    if (owned(parts.skills)) await parts.skills.close?.();
    if (owned(parts.sessionManager)) await parts.sessionManager.close();
    if (owned(parts.eventBus)) await parts.eventBus.close();
    if (owned(parts.queue)) await parts.queue.close();
  }
}

function noop(): void {}
