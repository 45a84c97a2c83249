// The facade lists the whole public surface of the runtime; its work is delegated to execute-request and load-agent.
import { randomUUID } from "node:crypto";
import path from "node:path";
import { registerBuiltins } from "../builtins/register-builtins.js";
import type { AppConfig } from "../config/app-config-schema.js";
import { loadConfig, parseConfig } from "../config/load-config.js";
import { nearMatch } from "../config/near-match.js";
import type {
  RunRecord,
  RunRequest,
  RunResult,
  RunStatus,
  TerminationReason,
} from "../contracts/run-types.js";
import type { EventBus } from "../contracts/runtime-event.js";
import type { Tool } from "../contracts/tool.js";
import { ConfigError, RunBusyError, RunNotCompletedError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { RunEventLog } from "../events/run-event-log.js";
import { getLogger } from "../logging/logger.js";
import { CancelScope } from "../loop/cancel-scope.js";
import type { ToolDecision } from "../loop/decisions.js";
import type { ResolvedAgent } from "../loop/resolved-agent.js";
import {
  checkResumeDecisions,
  type LoadedRunState,
  loadSuspension,
  type PreparedResume,
  prepareResume,
  resumeSessionId,
} from "../loop/resume/index.js";
import { parseCheckpointId, type RunState } from "../loop/run-state.js";
import type { RuntimePlugin } from "../loop/runtime-plugin.js";
import type { EffectivePolicy } from "../permissions/effective-policy.js";
import { policyForRun } from "../permissions/run-policy.js";
import { isPluginRef, loadPlugin } from "../plugins/load-plugin.js";
import type { SessionManager } from "../sessions/session-manager.js";
import type { SkillsManager } from "../skills/skills-manager.js";
import { type AgentAsToolOptions, agentAsTool } from "../tools/agent-as-tool.js";
import { executeRequest } from "./execute-request.js";
import { loadAgent } from "./load-agent.js";
import { type ReadOptions, RunChunkIterator, replayEvents } from "./read-run-events.js";
import type { RunStreamChunk } from "./stream-chunk.js";

interface Components {
  eventBus: EventBus;
  sessionManager: SessionManager;
  skills: SkillsManager;
  runtime: RuntimePlugin;
}

/** A run this process is executing. */
export interface LiveRun {
  readonly log: RunEventLog;
  readonly scope: CancelScope;
  readonly done: Promise<RunResult>;
  /** The token of the session scope it holds, once it holds it (a child run of its session re-enters with it). */
  readonly session: { token?: symbol };
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
  private readonly agents = new Map<string, Promise<ResolvedAgent>>();
  private readonly sessions = new Map<string, Set<string>>();
  private readonly liveRuns = new Map<string, LiveRun>();
  /** `attach()` calls waiting for a waiting run to be resumed in this process. */
  private readonly startWaiters = new Map<string, (() => void)[]>();
  /** Decisions per run, applied one batch after another. */
  private readonly deciding = new Map<string, Promise<RunResult>>();
  private configVersion = 1;
  private closed = false;

  constructor(
    config: AppConfig | Record<string, unknown>,
    options: { configPath?: string; baseDir?: string } = {},
  ) {
    registerBuiltins();
    this.config = parseConfig(config);
    this.configPath = options.configPath;
    this.baseDir = options.baseDir ?? (options.configPath ? path.dirname(options.configPath) : process.cwd());
    this.starting = this.start();
    this.starting.catch(() => {});
  }

  /** A runtime from a config object (code-first). */
  static async fromDict(
    config: Record<string, unknown>,
    options: { baseDir?: string } = {},
  ): Promise<Runtime> {
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
    const eventBus = await loadPlugin<EventBus>("event_bus", this.config.events, {
      baseDir,
      label: "events",
      requiredMethods: ["subscribe", "emit", "publish"],
    });
    const sessionManager = await loadPlugin<SessionManager>("session", this.config.session, {
      baseDir,
      label: "session",
      requiredMethods: ["session", "getState", "setState", "appendMessage", "loadMessages"],
    });
    const skills = await loadPlugin<SkillsManager>("skills", this.config.skills, {
      baseDir,
      label: "skills",
      requiredMethods: ["prepareSession", "loadReferences", "runSkill"],
    });
    const runtime = await loadPlugin<RuntimePlugin>("runtime", this.config.runtime, {
      baseDir,
      label: "runtime",
      requiredMethods: ["run"],
    });
    await runtime.initialize?.();
    this.components = { eventBus, sessionManager, skills, runtime };
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

  /** Run to completion and resolve with the final output; any other stop reason rejects. */
  async run<T = unknown>(request: RunRequest<T>): Promise<T> {
    const result = await this.runDetailed(request);
    if (result.stopReason === "completed") return result.finalOutput as T;
    throw (
      result.exception ??
      new RunNotCompletedError(
        `The run ended ${result.stopReason}${result.error ? `: ${result.error}` : ""}`,
        {
          result,
          hint: "Use runDetailed() to handle every stop reason",
        },
      )
    );
  }

  /** Run and resolve with the RunResult, whatever the run ends with. Rejects only for a request it cannot start. */
  async runDetailed<T = unknown>(request: RunRequest<T>): Promise<RunResult<T>> {
    const live = await this.startRun(request);
    return live.done as Promise<RunResult<T>>;
  }

  /**
   * Run and yield its events as they happen; the last chunk is `run.finished` with the RunResult. The run
   * starts at the first `next()`; a request that cannot start rejects there.
   */
  stream(
    request: RunRequest,
    options: { kinds?: readonly string[] } = {},
  ): AsyncIterableIterator<RunStreamChunk> {
    return new RunChunkIterator(
      () =>
        this.startRun(request).then((live) => {
          // A run refused before it started rejects its result and ends its log with the refusal; the stream
          // reports it, so the result's rejection is handled here.
          live.done.catch(noop);
          return live.log;
        }),
      options,
    );
  }

  /**
   * Replay a run's events after a sequence, then follow it live until it ends: nothing lost, nothing
   * twice, whether the run is live here, finished, or resumed in this process from the store. A run that waits
   * for decisions is followed into its resumption when it is decided in this process — attach before deciding
   * to see the first resumed event; leave with `return()` (`break`) to stop waiting.
   */
  attach(runId: string, options: ReadOptions = {}): AsyncIterableIterator<RunStreamChunk> {
    const live = this.liveRuns.get(runId);
    // A run that started here holds its whole log: the plain cursor is enough.
    if (live !== undefined && live.log.firstSequence <= (options.afterSequence ?? 0) + 1)
      return new RunChunkIterator(live.log, options);
    return this.follow(runId, options);
  }

  private async *follow(runId: string, options: ReadOptions): AsyncGenerator<RunStreamChunk> {
    await this.ready();
    let after = options.afterSequence ?? 0;
    for (;;) {
      const live = this.liveRuns.get(runId);
      if (live !== undefined) {
        // The part of the log before this process took the run over is in the store.
        if (after < live.log.firstSequence - 1) {
          for (const chunk of replayEvents(
            await this.sessionManager.loadEvents(runId, { afterSequence: after }),
            options,
          )) {
            if (chunk.sequence >= live.log.firstSequence) break;
            yield chunk;
          }
          after = live.log.firstSequence - 1;
        }
        yield* new RunChunkIterator(live.log, { ...options, afterSequence: after });
        return;
      }
      const record = await this.sessionManager.getRun(runId);
      if (!record)
        throw new ConfigError(`Unknown run '${runId}'`, {
          hint: "listRuns() shows the runs this store knows",
        });
      const stored = await this.sessionManager.loadEvents(runId, { afterSequence: after });
      if (stored.length > 0) after = stored[stored.length - 1]!.sequence;
      yield* replayEvents(stored, options);
      if (this.liveRuns.has(runId)) continue;
      if (record.status !== "waiting") return;
      // The run may have been resumed (and even finished) since its record was read: read it again before
      // waiting, and go round once more if anything moved.
      const again = await this.sessionManager.getRun(runId);
      if (this.liveRuns.has(runId) || again?.status !== "waiting" || again.updatedAt !== record.updatedAt)
        continue;
      await new Promise<void>((resolve) => {
        let waiting = this.startWaiters.get(runId);
        if (waiting === undefined) {
          waiting = [];
          this.startWaiters.set(runId, waiting);
        }
        waiting.push(resolve);
      });
    }
  }

  /**
   * Cancel a run that has not finished: one this process holds (created or running) through its cancel scope,
   * and a waiting one — which no process holds; it lives in the store — by ending it from its checkpoint, as
   * `cancelRun()` does. Resolves true when this call cancelled the run; false for a run that is unknown, already
   * finished or already cancelled (twice is harmless), or held by another process.
   */
  async cancel(runId: string, options: { reason?: string } = {}): Promise<boolean> {
    const live = this.liveRuns.get(runId);
    if (live !== undefined) return live.scope.cancel(cancelTermination(options.reason));
    return (await this.cancelWaiting(runId, cancelTermination(options.reason))) !== null;
  }

  /**
   * Decide suspended tool calls, keyed by tool-call id, in a batch or one by one. The run is rebuilt from
   * its suspension checkpoint — in this process or any other with the same store — and goes on: decided calls
   * replay in the order the model issued them, and the run waits again if some are still undecided. Resolves
   * with the run's result when it finishes or suspends again. A decision for an unknown run or call, a run that
   * is not waiting, or a call already decided is refused with `DecisionError` and changes nothing; a repeated
   * `decisionId` is a no-op. A decision for a run still running in this process waits until its step suspends.
   */
  decide(input: { runId: string; decisions: readonly ToolDecision[] }): Promise<RunResult> {
    const { runId } = input;
    const previous = this.deciding.get(runId);
    const next = (previous === undefined ? this.ready() : previous.then(noop, noop)).then(() =>
      this.applyDecisions(runId, input.decisions),
    );
    this.deciding.set(runId, next);
    const forget = () => {
      if (this.deciding.get(runId) === next) this.deciding.delete(runId);
    };
    next.then(forget, forget);
    return next;
  }

  private async applyDecisions(runId: string, decisions: readonly ToolDecision[]): Promise<RunResult> {
    const live = this.liveRuns.get(runId);
    if (live !== undefined) await live.done.catch(noop);
    const waiting = await this.waitingCheckpoint(runId);
    const fresh = checkResumeDecisions(waiting, decisions);
    if (fresh.length === 0) return waitingResult(waiting.record, waiting.state);
    const started = await this.startRun(
      { agentId: waiting.record.agentId, inputText: "", resumeFromCheckpoint: waiting.checkpointId },
      { decisions: fresh },
    );
    return started.done;
  }

  /** The suspension checkpoint of a run that waits for decisions; anything else is a `DecisionError`. */
  private async waitingCheckpoint(runId: string): Promise<LoadedRunState> {
    await this.ready();
    return loadSuspension(this.sessionManager, runId);
  }

  /**
   * Cancel a run: a live one as `cancel()` does, a waiting one by ending it from its checkpoint (the run's log
   * gets `run.cancelled` and `run.finished`, its record ends `cancelled`). Null for a run that is neither.
   */
  async cancelRun(runId: string, options: { reason?: string } = {}): Promise<RunResult | null> {
    const termination = cancelTermination(options.reason);
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
    const waiting = await this.waitingCheckpoint(runId);
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

  private async startRun(
    request: RunRequest,
    extras: { decisions?: readonly ToolDecision[]; cancel?: TerminationReason } = {},
  ): Promise<LiveRun> {
    if (this.closed) throw new ConfigError("The runtime is closed", { hint: "Create a new Runtime" });
    const parts = this.components ?? (await this.starting);
    const agent = await this.resolveAgent(request.agentId);
    const resume =
      request.resumeFromCheckpoint === undefined
        ? undefined
        : await prepareResume(parts.sessionManager, request.resumeFromCheckpoint, agent, request);
    const runId = resume?.sameRun ? resume.fromRunId : (request.runId ?? newId());
    if (this.liveRuns.has(runId)) {
      if (resume?.sameRun)
        throw new RunBusyError(`Run '${runId}' is already running in this process`, {
          hint: "Wait for it to finish or suspend, or cancel it; or resume with branch: true to start a new run from the checkpoint",
          context: { runId },
        });
      throw new ConfigError(`Run '${runId}' is already running`, { hint: "Use a new runId" });
    }
    const sessionId = this.sessionOf(request, resume);
    const normalized =
      resume === undefined
        ? { ...request, runId, sessionId }
        : {
            ...request,
            runId,
            sessionId,
            inputText: request.inputText || resume.inputText,
            durable: request.durable ?? resume.durable,
          };
    const scope = new CancelScope();
    if (extras.cancel !== undefined) scope.cancel(extras.cancel);
    // A caller's signal may outlive many runs: listen only while this run lasts.
    const signal = request.signal;
    const onAbort = signal ? () => scope.cancel({ type: "cancelled", value: "signal aborted" }) : undefined;
    if (signal && onAbort) {
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
    const log = new RunEventLog(runId, sessionId, agent.id, parts.eventBus, resume?.startAfter ?? 0);
    // A session made up for one run can never be named again; only named sessions are worth tracking.
    if (request.sessionId !== undefined) this.trackSession(sessionId, agent.id);
    // A child run in its parent's session (agent as tool) re-enters the scope the parent holds.
    const parent = request.parentRunId === undefined ? undefined : this.liveRuns.get(request.parentRunId);
    const session: { token?: symbol } = {};
    const reentrantToken = parent?.log.sessionId === sessionId ? parent.session.token : undefined;
    const input = {
      agent,
      request: normalized,
      log,
      scope,
      session,
      ...(reentrantToken === undefined ? {} : { reentrantToken }),
      ...parts,
    };
    const done = executeRequest(
      resume === undefined
        ? input
        : extras.decisions === undefined
          ? { ...input, resume }
          : { ...input, resume, decisions: extras.decisions },
    ).finally(() => {
      if (signal && onAbort) signal.removeEventListener("abort", onAbort);
      this.liveRuns.delete(runId);
    });
    const live: LiveRun = { log, scope, done, session };
    this.liveRuns.set(runId, live);
    const waiters = this.startWaiters.get(runId);
    if (waiters !== undefined) {
      this.startWaiters.delete(runId);
      for (const resolve of waiters) resolve();
    }
    return live;
  }

  /** A resumed run stays in its session; a branch may move to another. */
  private sessionOf(request: RunRequest, resume: PreparedResume | undefined): string {
    if (resume === undefined) return request.sessionId ?? `session-${newId()}`;
    return resumeSessionId(resume, request.sessionId);
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
    const agentId = await this.agentOfCheckpoint(checkpointId);
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
    const record = await this.sessionManager.getRun(runId);
    if (record === null)
      throw new ConfigError(`Unknown run '${runId}'`, { hint: "listRuns() shows the runs this store knows" });
    const prefix = `${runId}:step:`;
    return (await this.sessionManager.listCheckpoints(record.sessionId)).filter((id) =>
      id.startsWith(prefix),
    );
  }

  private async agentOfCheckpoint(checkpointId: string): Promise<string> {
    const parsed = parseCheckpointId(checkpointId);
    const record = parsed === null ? null : await this.sessionManager.getRun(parsed.runId);
    if (record === null) {
      throw new ConfigError(`Unknown checkpoint '${checkpointId}'`, {
        code: ERROR_CODES.CHECKPOINT_UNKNOWN,
        hint: "Run checkpoint ids look like '<runId>:step:<n>'; `keel checkpoints <config> <runId>` lists a run's",
      });
    }
    return record.agentId;
  }

  /** The loaded agent; unknown ids are a `ConfigError` with a near match. */
  private resolveAgent(agentId: string): Promise<ResolvedAgent> {
    let agent = this.agents.get(agentId);
    if (agent) return agent;
    const definition = this.config.agents.find((candidate) => candidate.id === agentId);
    if (!definition) {
      const ids = this.config.agents.map((candidate) => candidate.id);
      const suggestion = nearMatch(agentId, ids);
      return Promise.reject(
        new ConfigError(`Unknown agent id: '${agentId}'`, {
          hint: `${suggestion ? `Did you mean '${suggestion}'? ` : ""}Available agent ids: ${ids.join(", ")}`,
        }),
      );
    }
    const runtimeConfig = this.config.runtime.config as {
      tool_executor?: unknown;
      context_assembler?: unknown;
    };
    agent = loadAgent(definition, {
      baseDir: this.baseDir,
      runtime: this,
      defaults: {
        toolExecutor: runtimeConfig.tool_executor,
        contextAssembler: runtimeConfig.context_assembler,
      },
    });
    this.agents.set(agentId, agent);
    agent.catch(() => this.agents.delete(agentId));
    return agent;
  }

  private trackSession(sessionId: string, agentId: string): void {
    let agents = this.sessions.get(sessionId);
    if (!agents) {
      agents = new Set();
      this.sessions.set(sessionId, agents);
    }
    agents.add(agentId);
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
    for (const key of ["runtime", "session", "events"] as const) {
      if (JSON.stringify(config[key]) !== JSON.stringify(this.config[key])) {
        throw new ConfigError("Hot reload does not support changing top-level runtime/session/events", {
          hint: "Restart the process to change top-level components",
        });
      }
    }
    const before = new Map(this.config.agents.map((agent) => [agent.id, JSON.stringify(agent)]));
    const changedAgents = [...new Set([...before.keys(), ...config.agents.map((agent) => agent.id)])].filter(
      (id) => before.get(id) !== JSON.stringify(config.agents.find((agent) => agent.id === id)),
    );
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
    if (!this.config.agents.some((agent) => agent.id === agentId)) await this.resolveAgent(agentId);
  }

  /**
   * Drop the agent's loaded plugins and model client; the next run loads them again. What the old agent opened
   * (its memory, the tools its config entries loaded — an MCP toolset's pooled connections and servers —, its
   * tool executor) is closed once the runs already using it have ended, and this resolves then; tools and
   * executors given as objects in a code-first config are the caller's and stay open (the next load reuses
   * them).
   */
  async invalidateAgent(agentId: string): Promise<void> {
    const agent = this.agents.get(agentId);
    this.agents.delete(agentId);
    const loaded = await agent?.catch(() => undefined);
    if (loaded === undefined) return;
    // Runs started before the drop hold the old agent until they end; closing its tools under them would fail
    // their next calls.
    const using = [...this.liveRuns.values()].filter((live) => live.log.agentId === agentId);
    await Promise.allSettled(using.map((live) => live.done));
    const definition = this.config.agents.find((candidate) => candidate.id === agentId);
    const executorRef =
      definition?.tool_executor ?? (this.config.runtime.config as { tool_executor?: unknown }).tool_executor;
    const closing: Promise<void>[] = [];
    for (const [name, tool] of Object.entries(loaded.tools)) {
      if (loaded.toolsets?.[name] !== undefined && tool.close) closing.push(tool.close());
    }
    if (executorRef === undefined || isPluginRef(executorRef))
      if (loaded.toolExecutor.close) closing.push(loaded.toolExecutor.close());
    if (loaded.memory.close) closing.push(loaded.memory.close());
    const results = await Promise.allSettled(closing);
    for (const result of results) {
      if (result.status === "rejected")
        getLogger().warn(
          `Closing a resource of agent '${agentId}' failed: ${(result.reason as Error)?.message ?? String(result.reason)}`,
        );
    }
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
    const agent = await this.resolveAgent(agentId);
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
  getAgentInfo(
    agentId: string,
  ): { id: string; name: string; selectors: Record<string, unknown>; loaded: boolean } | null {
    const definition = this.config.agents.find((agent) => agent.id === agentId);
    if (!definition) return null;
    return {
      id: definition.id,
      name: definition.name,
      selectors: {
        memory: definition.memory,
        pattern: definition.pattern,
        tool_executor: definition.tool_executor ?? null,
        context_assembler: definition.context_assembler ?? null,
        llm: { provider: (definition.llm as { provider?: string } | undefined)?.provider ?? "mock" },
        tools: definition.tools.map(
          (tool) => (tool as { id?: string; name?: string }).id ?? (tool as { name: string }).name,
        ),
      },
      loaded: this.agents.has(agentId),
    };
  }

  /** Forget a session's per-agent state in this process, then release its shared resources. */
  async closeSession(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId);
    await this.releaseSession(sessionId);
  }

  /** Free runtime-level resources tied to a session (pooled connections). Idempotent. */
  async releaseSession(sessionId: string): Promise<void> {
    for (const agent of this.agents.values()) {
      const loaded = await agent.catch(() => undefined);
      if (!loaded) continue;
      for (const tool of Object.values(loaded.tools)) {
        await (tool as { releaseSession?: (id: string) => Promise<void> }).releaseSession?.(sessionId);
      }
    }
  }

  /** Cancel live runs, wait for them, and close every component. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const live of this.liveRuns.values())
      live.scope.cancel({ type: "cancelled", value: "runtime closed" });
    await Promise.allSettled([...this.liveRuns.values()].map((live) => live.done));
    const parts = await this.starting.catch(() => undefined);
    for (const agent of this.agents.values()) {
      const loaded = await agent.catch(() => undefined);
      if (!loaded) continue;
      await loaded.memory.close?.();
      await loaded.toolExecutor.close?.();
      for (const tool of Object.values(loaded.tools)) await tool.close?.();
      await loaded.model.close?.();
    }
    if (!parts) return;
    await parts.runtime.close?.();
    await parts.skills.close?.();
    await parts.sessionManager.close();
    await parts.eventBus.close();
  }
}

/**
 * A fresh uuid as a flat string. Node builds `randomUUID()` from thirteen concatenated pieces; a run keeps its id
 * for its whole life, and the flat copy is a few hundred bytes smaller (S3).
 */
function noop(): void {}

/** What `decide` answers when every decision was a repeat: the run as it waits. */
function waitingResult(record: RunRecord, state: RunState): RunResult {
  return {
    runId: record.runId,
    finalOutput: null,
    stopReason: "suspended",
    termination: { type: "suspended" },
    pendingToolCalls: record.pendingToolCalls,
    usage: state.usage,
    artifacts: state.artifacts,
    metadata: { agentId: record.agentId, sessionId: record.sessionId, steps: state.step },
  };
}

function newId(): string {
  return randomUUID().toLowerCase();
}

function cancelTermination(reason: string | undefined): TerminationReason {
  return reason === undefined ? { type: "cancelled" } : { type: "cancelled", value: reason };
}
