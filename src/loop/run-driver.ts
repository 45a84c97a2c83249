// One class on purpose: the driver is the single place every model and tool call passes through.

// The module's `performance`, not the global one: in Node 20 the global is a getter, read per call.
import { performance } from "node:perf_hooks";
import type { ModelResponse, Phase, ToolCallState } from "../contracts/hook.js";
import type { ModelOutputSchema, ModelRequest, ModelStreamPart } from "../contracts/language-model.js";
import type { Message, ToolCall } from "../contracts/message.js";
import type { RunArtifact, RunRequest } from "../contracts/run-types.js";
import type { RunContext, Tool } from "../contracts/tool.js";
import { toErrorDetails } from "../errors/keel-error.js";
import { checkEventPayload } from "../events/event-schemas.js";
import type { RunEventLog } from "../events/run-event-log.js";
import { getLogger } from "../logging/logger.js";
import type { Pattern, PatternDriver, StepAction, ToolCallOutcome } from "../patterns/pattern.js";
import type { EffectivePolicy } from "../permissions/effective-policy.js";
import { permissionsComputedPayload } from "../permissions/run-policy.js";
import type { SkillPolicyWatch } from "../permissions/skill-policy-watch.js";
import { DEFAULT_LARGE_OUTPUT_BYTES } from "../run-folders/large-output.js";
import type { RunFolder } from "../run-folders/run-folder.js";
import { type Deadline, deadlines } from "../util/deadline-queue.js";
import { accumulateUsage } from "./accumulate-usage.js";
import { BudgetGuard } from "./budget-guard.js";
import type { CancelScope } from "./cancel-scope.js";
import { captureRunState, type RunProgress } from "./capture-run-state.js";
import type { CheckpointWriter } from "./checkpoint-writer.js";
import { hasLazyContainers } from "./create-run-context.js";
import { type StickyAction, sessionStickyDecision, stickToSession } from "./decisions.js";
import { FunctionInvocationContext } from "./function-invocation-context.js";
import { callModelThroughPhases } from "./model-call.js";
import { buildModelRequest } from "./model-call-request.js";
import { PhaseContext } from "./phase-context.js";
import { readModelCall } from "./read-model-stream.js";
import type { ResolvedAgent } from "./resolved-agent.js";
import type { RunDriverInit, RunDriverView, RunLimits } from "./run-driver-view.js";
import { TerminateRun } from "./run-signals.js";
import type { CheckpointPhase, StopConditionMemory } from "./run-state.js";
import { stepSignature } from "./stop-conditions.js";
import { ToolCallContext, type ToolCallHost } from "./tool-call-context.js";
import { toOutcomes } from "./tool-call-outcome.js";
import { callOneTool, callToolBatch } from "./tool-calls-outside-turns.js";
import { executeToolStage } from "./tool-stage.js";

/**
 * The run loop's side of a pattern: it brackets steps, passes every model call and tool call through the
 * phases, counts usage, enforces budgets and stop conditions, and emits the events. Patterns decide what a
 * step does; the driver decides everything around it.
 */
export class RunDriver implements PatternDriver, RunProgress, ToolCallHost, RunDriverView {
  step = 0;
  stopRequested: string | null = null;
  /** Calls waiting for a decision when the run suspends. */
  suspended: ToolCallState[] = [];
  /** Durable mode: a checkpoint after every model call, tool call and step. */
  durable = false;
  /** Writes the run's checkpoints; set by the run loop (a run without one writes none). */
  checkpoints: CheckpointWriter | null = null;
  /** The pattern driving the run, asked for its progress at each checkpoint. */
  pattern: Pattern | null = null;
  /** Where the run's own messages start in the transcript. */
  firstNewMessage = 0;
  /** The transcript's length when the step in flight began. */
  stepStartLength = 0;
  /** The calls of the step in flight, as the tool stage tracks them. */
  inFlight: readonly ToolCallState[] = EMPTY_STATES;
  startedAtMs = Date.now();
  /** A durable run's last tool results are not checkpointed yet; the next boundary must write them. */
  owesCheckpoint = false;
  /** Decisions applied in this run, by id. */
  decisionIds: string[] = EMPTY as string[];
  /** Decisions that stick for later calls of a tool in this run. */
  sticky: Map<string, StickyAction> | null = null;
  private consecutiveErrors = 0;
  private lastText = "";
  private stepCalls: readonly ToolCall[] = EMPTY_CALLS;
  private signatures: string[] = [];
  private stepDeadline: Deadline | null = null;
  private warned: Set<string> | null = null;
  private resuming = false;

  private readonly budget: BudgetGuard;
  /** The run's effective permission policy; the ToolGate refuses or asks by it. */
  policy: EffectivePolicy | undefined;
  /** Recomputes {@link policy} when a skill loads during the run; undefined for an agent without a policy. */
  policyWatch: SkillPolicyWatch | undefined = undefined;
  /** The run's folder when the agent keeps run folders; undefined costs the tool stage one check. */
  runFolder: RunFolder | undefined = undefined;

  readonly agent: ResolvedAgent;
  readonly ctx: RunContext;
  readonly log: RunEventLog;
  readonly scope: CancelScope;
  readonly limits: RunLimits;
  /** The run's whole request; `ctx.runRequest` is it without the kwargs buckets. */
  readonly request: RunRequest;

  constructor(run: RunDriverInit) {
    this.agent = run.agent;
    this.ctx = run.ctx;
    this.log = run.log;
    this.scope = run.scope;
    this.limits = run.limits;
    this.request = run.request ?? run.ctx.runRequest;
    this.budget = new BudgetGuard(this.limits, this);
  }

  /** The run folder's `workspace/`, which the sandbox uses as the run's workspace. */
  get workspaceDir(): string | undefined {
    return this.runFolder?.workspaceDir;
  }

  /** Tool data over this many bytes becomes a run artifact. */
  get largeOutputBytes(): number {
    return this.agent.largeOutputBytes ?? DEFAULT_LARGE_OUTPUT_BYTES;
  }

  get functionInvocationKwargs(): Record<string, unknown> | undefined {
    return this.request.functionInvocationKwargs;
  }

  get fingerprint(): string {
    return this.agent.fingerprint;
  }

  get stopConditions(): StopConditionMemory {
    return { consecutiveErrors: this.consecutiveErrors, signatures: this.signatures };
  }

  get idempotencyWarned(): ReadonlySet<string> {
    return this.warned ?? EMPTY_SET;
  }

  get patternProgress(): unknown {
    return this.pattern?.saveProgress?.();
  }

  /** Continue a run from a checkpoint: its step count, stop-condition memory and warnings. */
  restoreProgress(progress: {
    step: number;
    firstNewMessage: number;
    stepStartLength: number;
    stopConditions: StopConditionMemory;
    idempotencyWarned: readonly string[];
    startedAtMs: number;
    decisionIds?: readonly string[];
    sticky?: Readonly<Record<string, StickyAction>>;
  }): void {
    this.decisionIds = progress.decisionIds?.slice() ?? [];
    this.sticky = progress.sticky === undefined ? null : new Map(Object.entries(progress.sticky));
    this.step = progress.step;
    this.firstNewMessage = progress.firstNewMessage;
    this.stepStartLength = progress.stepStartLength;
    this.consecutiveErrors = progress.stopConditions.consecutiveErrors;
    this.signatures = progress.stopConditions.signatures.slice();
    this.warned = progress.idempotencyWarned.length > 0 ? new Set(progress.idempotencyWarned) : null;
    this.startedAtMs = progress.startedAtMs;
    this.resuming = true;
  }

  /** True once after a resume: the pattern continues the run rather than starting it. */
  takeResumed(): boolean {
    const resumed = this.resuming;
    this.resuming = false;
    return resumed;
  }

  /**
   * Write a checkpoint of the run as it is now. Resolves when it is stored or its failure reported; a
   * run without a checkpoint writer writes nothing.
   */
  checkpoint(phase: CheckpointPhase, final?: { output: unknown }): Promise<unknown> {
    const writer = this.checkpoints;
    if (writer === null) return Promise.resolve();
    this.owesCheckpoint = false;
    return writer.write(captureRunState(this, phase, final), this.ctx.transcript);
  }

  /**
   * A decision that sticks for this tool: the run's own (`always: true`), else the session's
   * (`always: "session"`), else none.
   */
  stickyDecision(toolId: string): StickyAction | undefined {
    const own = this.sticky?.get(toolId);
    if (own !== undefined) return own;
    return sessionStickyDecision(this.ctx.state, toolId);
  }

  /** Record a decision that sticks for later calls of its tool. */
  stick(toolId: string, action: StickyAction, scope: true | "session"): void {
    if (scope === "session") {
      stickToSession(this.ctx.state, toolId, action);
      return;
    }
    if (this.sticky === null) this.sticky = new Map();
    this.sticky.set(toolId, action);
  }

  /** `run.durable_idempotency_warning`, the first time a durable run calls a tool that is not idempotent. */
  warnNotIdempotent(toolId: string): void {
    if (this.warned?.has(toolId)) return;
    if (this.warned === null) this.warned = new Set();
    this.warned.add(toolId);
    this.log.emit("run.durable_idempotency_warning", {
      toolId,
      hint: `Tool '${toolId}' is not idempotent: if the run stops while it runs, its call is suspended for a decision instead of run again`,
    });
  }

  hookContext(phase: Phase, call?: ToolCallState): PhaseContext {
    const context = new PhaseContext(phase, this);
    if (call !== undefined) context.call = call;
    return context;
  }

  /** Throw the pending termination, if any: the cancel scope's, or a stop a hook asked for. */
  checkpointBoundary(): void {
    if (this.scope.termination !== null) throw new TerminateRun(this.scope.termination);
    if (this.stopRequested !== null)
      throw new TerminateRun({ type: "behavior_requested", value: this.stopRequested });
  }

  async runStep(body: () => Promise<StepAction>): Promise<StepAction> {
    const begun = this.beginStep();
    if (begun !== undefined) await begun;
    let action: StepAction;
    try {
      action = await body();
    } catch (error) {
      await this.abortStep(error);
      throw error;
    }
    const completed = this.completeStep(action);
    if (completed !== undefined) await completed;
    return action;
  }

  /**
   * Begin a step: the step limit, `step.started`, the step's deadline, StepStart hooks. Returns a promise only
   * when there are hooks, so a pattern's loop awaits nothing it does not need to.
   */
  beginStep(): Promise<void> | undefined {
    this.checkpointBoundary();
    if (this.step >= this.limits.maxSteps) throw new TerminateRun({ type: "stopped", value: "max_steps" });
    const step = ++this.step;
    this.stepStartLength = this.ctx.transcript.length;
    this.lastText = "";
    this.stepCalls = EMPTY_CALLS;
    const started = this.log.emit("step.started", { step });
    const timeoutMs = this.limits.stepTimeoutMs;
    // The step's time limit runs from its event's time: one clock read for both.
    this.stepDeadline =
      timeoutMs > 0 ? deadlines.addAt(started.timestampMs + timeoutMs, this.onStepTimeout) : null;
    const hooks = this.agent.hooks;
    if (hooks.stepStart.length > 0) return hooks.run("stepStart", this.hookContext("stepStart"));
    return undefined;
  }

  /**
   * End a step whose body returned: StepEnd hooks, `step.finished`, then — when the run is to go on — the
   * stop conditions and budgets, which throw `TerminateRun` when one fires.
   */
  completeStep(action: StepAction): Promise<void> | undefined {
    this.stepDeadline?.cancel();
    this.stepDeadline = null;
    const hooks = this.agent.hooks;
    if (this.durable) {
      const ended = hooks.stepEnd.length > 0 ? hooks.run("stepEnd", this.hookContext("stepEnd")) : undefined;
      return ended === undefined
        ? this.durableStepEnd(action)
        : ended.then(() => this.durableStepEnd(action));
    }
    if (hooks.stepEnd.length > 0) {
      return hooks.run("stepEnd", this.hookContext("stepEnd")).then(() => this.afterStepEnd(action));
    }
    this.afterStepEnd(action);
    return undefined;
  }

  /** StepEnd of a durable run: the step's checkpoint lands before the stop conditions decide what follows. */
  private durableStepEnd(action: StepAction): Promise<void> {
    this.log.emit("step.finished", { step: this.step, action: action.type });
    this.inFlight = EMPTY_STATES;
    if (action.type === "final") return this.checkpoint("step_end", { output: action.output }).then(noop);
    this.noteSignature();
    return this.checkpoint("step_end").then(() => {
      this.checkpointBoundary();
      this.evaluateStopConditions(this.step);
    });
  }

  /**
   * Step into the step a checkpoint caught in flight: `step.started` (with `resumed: true`) and its deadline;
   * StepStart hooks ran when the step first began and are not run again.
   */
  resumeStep(answer: { text: string; calls: readonly ToolCall[] }): void {
    // A run cancelled before it goes on is not stopped here: the tool stage gives each of the step's calls its
    // one result (the transcript stays valid for the session's next run), then ends the run.
    this.lastText = answer.text;
    this.stepCalls = answer.calls;
    this.log.emit("step.started", { step: this.step, resumed: true });
    const timeoutMs = this.limits.stepTimeoutMs;
    this.stepDeadline = timeoutMs > 0 ? deadlines.add(timeoutMs, this.onStepTimeout) : null;
  }

  /** End a step whose body threw. StepStart and StepEnd stay paired on every exit; the step's own error wins. */
  async abortStep(error: unknown): Promise<void> {
    this.stepDeadline?.cancel();
    this.stepDeadline = null;
    const action = error instanceof TerminateRun ? error.termination.type : "error";
    const hooks = this.agent.hooks;
    if (hooks.stepEnd.length > 0) {
      // The step's own error is what ends the run; a StepEnd hook failing on the way out is reported, not lost.
      await hooks.run("stepEnd", this.hookContext("stepEnd")).catch((hookError: unknown) => {
        getLogger().warn(
          `A StepEnd hook failed while step ${this.step} ended early: ${(hookError as Error)?.message}`,
          { runId: this.ctx.runId, step: this.step, cause: hookError },
        );
      });
    }
    this.log.emit("step.finished", { step: this.step, action });
  }

  private afterStepEnd(action: StepAction): void {
    this.log.emit("step.finished", { step: this.step, action: action.type });
    if (action.type === "final") return;
    this.checkpointBoundary();
    this.noteSignature();
    this.evaluateStopConditions(this.step);
  }

  /** Remember the step's signature for loop detection. */
  private noteSignature(): void {
    const window = this.agent.stopConditions.signatureWindow;
    if (window > 0) {
      this.signatures.push(stepSignature(this.lastText, this.stepCalls));
      if (this.signatures.length > window) this.signatures.shift();
    }
  }

  /** Stop conditions and budgets at StepEnd; the run goes on only if none fires. */
  private evaluateStopConditions(step: number): void {
    const conditions = this.agent.stopConditions;
    const usage = this.ctx.usage;
    const decision = conditions.isEmpty
      ? null
      : conditions.evaluate({
          steps: step,
          elapsedMs: Date.now() - this.startedAtMs,
          totalTokens: usage.totalTokens,
          consecutiveErrors: this.consecutiveErrors,
          lastText: this.lastText,
          requestedTools: this.stepCalls.map((call) => call.name),
          recentSignatures: this.signatures,
        });
    if (decision !== null) throw new TerminateRun({ type: "stopped", value: decision.type });
    if (step >= this.limits.maxSteps) throw new TerminateRun({ type: "stopped", value: "max_steps" });
    if (this.budget.active) this.budget.check(step);
  }

  callLlm(overrides: Partial<ModelRequest> = NO_OVERRIDES): Promise<ModelResponse> {
    const agent = this.agent;
    const hooks = agent.hooks;
    // What waits on something around the model (an owed checkpoint, steering, hooks, chat middleware) goes the
    // long way; the usual call is one promise that the stream's reader settles, with no `async` frame in between.
    if (
      this.owesCheckpoint ||
      this.request.steering !== undefined ||
      agent.middleware.chat.length > 0 ||
      hooks.beforeInference.length > 0 ||
      hooks.afterInference.length > 0
    ) {
      return callModelThroughPhases(this, overrides);
    }
    try {
      this.checkpointBoundary();
      const request = buildModelRequest(this, overrides);
      const startedAt = this.modelCalled(request);
      let parts: AsyncIterable<ModelStreamPart>;
      try {
        parts = agent.model.stream(request);
      } catch (error) {
        this.modelFailed(error);
      }
      return readModelCall(parts, this, startedAt);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The budget is checked and `llm.called` emitted; returns when the call started. */
  modelCalled(request: ModelRequest): number {
    if (this.budget.active) this.budget.check(this.step, this.budget.projectInputTokens(request));
    const { modelId: model, provider } = this.agent.model;
    this.log.emit("llm.called", { model, hasTools: (request.tools?.length ?? 0) > 0, provider });
    return performance.now();
  }

  /** The model whose stream names none (for `readModelStream`). */
  get fallbackModel(): string {
    return this.agent.model.modelId;
  }

  /** A model call without hooks answered: counted, then ended. */
  modelAnswered(response: ModelResponse, startedAt: number): ModelResponse {
    return this.modelCallEnded(this.modelStreamed(response), startedAt);
  }

  /** The model answered: the run may have been stopped meanwhile; chat middleware counts its own usage. */
  modelStreamed(response: ModelResponse): ModelResponse {
    this.checkpointBoundary();
    if (this.agent.middleware.chat.length === 0) {
      accumulateUsage(this.ctx.usage, response.usage, this.agent.pricing);
    }
    this.lastText = response.text;
    return response;
  }

  /** The model's stream failed: counted; a cancelled run ends as cancelled, else `llm.failed`. */
  modelFailed(error: unknown): never {
    this.ctx.usage.llmCalls++;
    if (this.scope.cancelled) throw new TerminateRun(this.scope.termination!);
    this.failModelCall(error);
  }

  modelCallEnded(response: ModelResponse, startedAt: number): ModelResponse {
    this.stepCalls = response.toolCalls;
    const finished = this.log.emit("llm.finished", {
      model: response.model,
      usage: response.usage,
      stopReason: response.stopReason,
      durationMs: performance.now() - startedAt,
    });
    const usage = this.ctx.usage;
    // A copy: the run's totals go on changing after this event is logged. Emitted in the same synchronous
    // stretch as `llm.finished`, so it carries that event's time rather than reading the clock again.
    this.log.emit(
      "usage.updated",
      { usage: { ...usage, costBreakdown: { ...usage.costBreakdown } } },
      finished.timestampMs,
    );
    if (this.budget.active) this.budget.check(this.step);
    return response;
  }

  /** Count the failed call, report `llm.failed`, and throw the error on. */
  failModelCall(error: unknown): never {
    this.consecutiveErrors++;
    this.log.emit("llm.failed", {
      model: this.agent.model.modelId,
      error: (error as Error).message,
      errorDetails: toErrorDetails(error),
    });
    throw error;
  }

  /** The run's output type as a model output schema, when it has one that JSON Schema can describe. */
  runOutputSchema(): ModelOutputSchema | undefined {
    const ctx = this.ctx;
    if (hasLazyContainers(ctx) && !ctx.hasScratch) return undefined;
    const schema = ctx.scratch.outputSchema as Record<string, unknown> | undefined;
    return schema === undefined ? undefined : { name: "output", schema };
  }

  /** `llm.delta` for every text delta. */
  onTextDelta(text: string): void {
    this.log.emit("llm.delta", { text });
  }

  onReasoningDelta(text: string): void {
    this.log.emit("llm.reasoning", { text });
  }

  callTools(calls: ToolCall[]): Promise<ToolCallOutcome[]> {
    return executeToolStage(this, calls, APPEND_RESULTS).then(toOutcomes);
  }

  callTool(toolId: string, params: Record<string, unknown>): Promise<unknown> {
    return callOneTool(this, toolId, params);
  }

  callToolBatch(calls: readonly (readonly [string, Record<string, unknown>])[]): Promise<unknown[]> {
    return callToolBatch(this, calls);
  }

  toolCallContext(state: ToolCallState, tool: Tool, resumeInput: unknown): ToolCallContext {
    const Context = this.agent.middleware.function.length > 0 ? FunctionInvocationContext : ToolCallContext;
    return new Context(
      this.ctx,
      state.id,
      state.toolId,
      tool,
      state.params,
      tool.executionSpec(),
      this,
      resumeInput,
    );
  }

  /** One closure per run for every step's deadline. */
  private readonly onStepTimeout = (): void => {
    this.scope.cancel({ type: "stopped", value: "timeout" });
  };

  emitToolDelta(toolCallId: string, toolId: string, text: string): void {
    this.log.emit("tool.delta", { toolCallId, toolId, text });
  }

  /** Called by the tool stage after each step's calls: feeds the consecutive-errors condition. */
  noteToolStep(states: readonly ToolCallState[]): void {
    let failures = 0;
    for (const state of states) if (state.status === "failed") failures++;
    this.consecutiveErrors = states.length > 0 && failures === states.length ? this.consecutiveErrors + 1 : 0;
  }

  /** A skill a call of this step loaded changes the policy for every later call of the run. */
  refreshPolicy(): void {
    const next = this.policyWatch?.next();
    if (next === undefined) return;
    this.policy = next;
    this.log.emit("permissions.computed", permissionsComputedPayload(next, "skill_loaded"));
  }

  suspendWith(states: ToolCallState[]): void {
    this.suspended = states;
  }

  /** A pattern's own event; a declared name missing a required payload key is warned about, never refused. */
  emit(name: string, payload: Record<string, unknown>): void {
    const missing = checkEventPayload(name, payload);
    if (missing.length > 0) {
      getLogger().warn(`event ${name} is missing required payload key(s): ${missing.join(", ")}`, {
        runId: this.ctx.runId,
      });
    }
    this.log.emit(name, payload);
  }

  addArtifact(artifact: Partial<RunArtifact> & { name: string }): void {
    const full: RunArtifact = {
      name: artifact.name,
      kind: artifact.kind ?? "generic",
      payload: artifact.payload ?? null,
      metadata: artifact.metadata ?? {},
    };
    this.ctx.artifacts.push(full);
    this.log.emit("artifact", { name: full.name, kind: full.kind, payload: full.payload });
  }

  systemPrompt(): string | undefined {
    const base = this.agent.instructions;
    const ctx = this.ctx;
    if (hasLazyContainers(ctx) && !ctx.hasSystemPromptFragments) return base;
    const fragments = ctx.systemPromptFragments;
    if (fragments.length === 0) return base;
    return [base, ...fragments].filter((part) => part !== undefined && part !== "").join("\n\n");
  }

  /** Take the last structured-output failure for the pattern to show the model. */
  takeValidationError(): ValidationNote | undefined {
    const ctx = this.ctx;
    if (hasLazyContainers(ctx) && !ctx.hasScratch) return undefined;
    const last = ctx.scratch.lastValidationError as ValidationNote | undefined;
    if (last !== undefined) delete ctx.scratch.lastValidationError;
    return last;
  }

  appendMessage(message: Message): void {
    this.ctx.transcript.push(message);
  }
}

type ValidationNote = { attempt: number; message: string; expectedSchema: unknown };

const EMPTY: readonly string[] = Object.freeze([]);
const EMPTY_CALLS: readonly ToolCall[] = Object.freeze([]);
const EMPTY_STATES: readonly ToolCallState[] = Object.freeze([]);
const EMPTY_SET: ReadonlySet<string> = new Set();

function noop(): void {}

const APPEND_RESULTS = Object.freeze({ appendResults: true });
const NO_OVERRIDES: Partial<ModelRequest> = Object.freeze({});
