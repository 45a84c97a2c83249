// Long because a run's lifecycle is one procedure: its start, the body middleware wraps, resume, its end.

import {
  createRunUsage,
  type RunRequest,
  type RunResult,
  type RunUsage,
  type SuspendedToolCall,
  type TerminationReason,
} from "../contracts/run-types.js";
import type { RunContext } from "../contracts/tool.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { KeelError, toErrorDetails } from "../errors/keel-error.js";
import { getLogger } from "../logging/logger.js";
import type { Pattern } from "../patterns/pattern.js";
import { permissionsComputedPayload } from "../permissions/run-policy.js";
import { SkillPolicyWatch } from "../permissions/skill-policy-watch.js";
import { toJsonSchema } from "../schema/to-json-schema.js";
import { type Deadline, deadlines } from "../util/deadline-queue.js";
import { type RunAttempt, runWithAgentMiddleware } from "./agent-call-context.js";
import type { CancelScope } from "./cancel-scope.js";
import { CheckpointWriter, type StoredMarks } from "./checkpoint-writer.js";
import { createRunContext } from "./create-run-context.js";
import { executeWithValidation } from "./execute-with-validation.js";
import { assemblyInput, finalizeResult } from "./finalize-result.js";
import { finishInterruptedStep, type ResumePlan, reloadCheckpoint, resumeInDriver } from "./resume/index.js";
import { RunDriver } from "./run-driver.js";
import type { RunLoopInput, RunLoopOutcome } from "./run-loop-input.js";
import { TerminateRun } from "./run-signals.js";
import { stopReasonOf } from "./termination.js";
import { writeBackMemory } from "./write-back-memory.js";

const NOTHING_STORED: StoredMarks = { checkpoints: 0, messages: 0, sequence: 0, latestCheckpointId: null };

/**
 * One run, start to finish: RunStart, context and memory, the pattern's steps with structured-output retries,
 * then RunEnd and `run.finished` — on every exit, errors and cancellation included. Never throws for anything
 * a run can end with; the termination becomes the result's stop reason. Agent middleware wraps the
 * part between `run.started` and the final events.
 */
export function executeRunLoop(input: RunLoopInput): Promise<RunLoopOutcome> {
  const { agent, request, log, scope } = input;
  const usage = createRunUsage();
  const maxDurationMs = request.budget?.maxDurationMs;
  const durationDeadline =
    maxDurationMs !== undefined
      ? deadlines.add(maxDurationMs, () => scope.cancel({ type: "stopped", value: "timeout" }))
      : null;
  const traceContext = input.resume?.state.traceContext;
  const writer = new CheckpointWriter(input.sessionManager, log, input.stored ?? NOTHING_STORED);
  writer.traceContext = traceContext;
  // A resumed run names the trace its checkpoint kept, so a tracing bus in any process continues it; a new run
  // names the trace its caller is in, if the request brought one, so its span is the caller's child.
  const resumed = input.resume !== undefined;
  const named = resumed ? traceContext : request.traceContext;
  log.emit("run.started", named === undefined ? { resumed } : { resumed, traceContext: named });
  const policy = input.policy ?? agent.policy;
  // Once per run, and only for an agent with tools: a policy over no tools decides nothing.
  if (policy !== undefined && agent.toolSpecs.length > 0)
    log.emit("permissions.computed", permissionsComputedPayload(policy, "run_started"));
  if (agent.memoryWriteMode !== undefined) log.emit("memory.write_mode", { mode: agent.memoryWriteMode });
  // The loop runs only inside the session's exclusive scope; `run.started` stays the run's first event.
  log.emit("session.acquired", { sessionId: log.sessionId });
  // Without agent middleware the body finishes the run itself: a parked run then holds one frame here (S3).
  if (agent.middleware.agent.length === 0) {
    return runBody(input, request, { usage, writer, finish: durationDeadline });
  }
  const parts = { usage, writer };
  return runWithAgentMiddleware(input, usage, (bodyRequest) => runBody(input, bodyRequest, parts)).then(
    (attempt) => finishRun(input, attempt, { writer, finish: durationDeadline }),
  );
}

/** The run's last events, once its result is final: finalized by the context assembler, or, for a suspended run,
 * after what waits for a decision is stored. Synchronous when there is nothing to wait for. */
function finishRun(
  input: RunLoopInput,
  attempt: RunAttempt,
  end: { readonly writer: CheckpointWriter; readonly finish: Deadline | null },
): RunLoopOutcome | Promise<RunLoopOutcome> {
  const { writer } = end;
  end.finish?.cancel();
  const { result } = attempt;
  if (result.stopReason === "suspended") {
    const onSuspended = input.onSuspended;
    if (onSuspended === undefined) return emitFinished(input, writer, attempt);
    // The store may turn the result into a failure when it cannot keep what a decision needs.
    return onSuspended(result).then(() => emitFinished(input, writer, attempt));
  }
  if (input.agent.contextAssembler.finalize === undefined) return emitFinished(input, writer, attempt);
  return finalizeResult(input, attempt).then((final) => {
    attempt.result = final;
    return emitFinished(input, writer, attempt);
  });
}

function emitFinished(input: RunLoopInput, writer: CheckpointWriter, attempt: RunAttempt): RunLoopOutcome {
  const { log } = input;
  const { result } = attempt;
  if (result.stopReason === "failed")
    log.emit("run.failed", { error: result.error, errorDetails: result.errorDetails });
  if (result.stopReason === "cancelled")
    log.emit("run.cancelled", {
      reason: result.termination.type === "cancelled" ? result.termination.value : undefined,
    });
  log.emit("run.finished", { result });
  return {
    result,
    context: attempt.context,
    newMessages: attempt.newMessages,
    storedSequence: writer.storedSequence,
    storedMessages: writer.storedMessages,
  };
}

/** What a run's body works with besides its input: its usage counters and its checkpoint writer. */
interface RunParts {
  readonly usage: RunUsage;
  readonly writer: CheckpointWriter;
}

/**
 * The run from RunStart to RunEnd, with the request as agent middleware left it. Given the run's duration
 * deadline (`null` when it has none), it also finishes the run; agent middleware finishes it after its chain.
 */
function runBody(input: RunLoopInput, request: RunLoopInput["request"], parts: RunParts): Promise<RunAttempt>;
function runBody(
  input: RunLoopInput,
  request: RunLoopInput["request"],
  parts: RunParts & { readonly finish: Deadline | null },
): Promise<RunLoopOutcome>;
function runBody(
  input: RunLoopInput,
  request: RunLoopInput["request"],
  parts: RunParts & { readonly finish?: Deadline | null },
): Promise<RunAttempt | RunLoopOutcome> {
  const { usage, writer } = parts;
  const { agent, log, scope } = input;
  const ctx = createRunContext({
    agentId: agent.id,
    sessionId: request.sessionId,
    runId: request.runId,
    request: withoutKwargs(request),
    state: input.sessionState,
    tools: agent.tools,
    model: agent.model,
    modelOptions: agent.modelOptions,
    log,
    toolExecutor: agent.toolExecutor,
    usage,
  });
  const budget = request.budget ?? {};
  const driver = new RunDriver({
    agent,
    ctx,
    log,
    scope,
    limits: {
      // The request's own step budget replaces the agent's, above it too; a max_rounds condition still applies.
      maxSteps: budget.maxSteps ?? agent.limits.maxSteps,
      maxToolCalls: budget.maxToolCalls,
      maxTotalTokens: budget.maxTotalTokens,
      maxCostUsd: budget.maxCostUsd,
      stepTimeoutMs: agent.limits.stepTimeoutMs,
    },
    request,
  });
  driver.durable = request.durable === true;
  driver.checkpoints = writer;
  driver.policy = input.policy ?? agent.policy;
  if (agent.policy !== undefined && agent.policyInput !== undefined && agent.toolSpecs.length > 0) {
    const base = { policy: agent.policy, policyInput: agent.policyInput };
    driver.policyWatch = new SkillPolicyWatch(base, input.skillSummaries, input.sessionState);
  }
  if (input.runFolder !== undefined) driver.runFolder = input.runFolder;
  // A pass that agent middleware runs again starts over: the stored transcript is rewritten from its start.
  if (input.resume === undefined) writer.rewind(0);
  // Reactions rather than one async frame: a run parked on a tool then holds two small reactions, not a
  // suspended frame with every local of the run's body (S3). What comes after the pattern is chained once it
  // answers, so a parked run holds no link for it.
  // What follows the pattern runs in the reaction that sees it answer, unless memory's write-back has to be waited
  // for: a run's end then costs no further promise.
  const threw = (thrown: unknown) => endBody(input, parts, endOfThrow(thrown, driver));
  return startPattern(input, driver, ctx)
    .then((first) => runDurably(input, driver, first))
    .then((output) => {
      let written: void | Promise<void>;
      try {
        written = afterPattern(input, driver, output);
      } catch (thrown) {
        return threw(thrown);
      }
      if (written === undefined)
        return endBody(input, parts, { driver, output, termination: { type: "natural_end" } });
      return written.then(
        () => endBody(input, parts, { driver, output, termination: { type: "natural_end" } }),
        threw,
      );
    }, threw);
}

/** RunStart and the context for a new run, or the resumed run's plan: what the pattern starts from. */
async function startPattern(
  input: RunLoopInput,
  driver: RunDriver,
  ctx: RunContext,
): Promise<{ pattern: Pattern; plan: ResumePlan | null }> {
  const { agent } = input;
  const pattern = agent.createPattern();
  if (input.resume !== undefined) {
    const plan = await resumeInDriver({ driver, loaded: input.resume, pattern, decisions: input.decisions });
    describeOutput(driver.request, ctx);
    return { pattern, plan };
  }
  if (agent.hooks.runStart.length > 0) await agent.hooks.run("runStart", driver.hookContext("runStart"));
  driver.checkpointBoundary();
  driver.firstNewMessage = await prepareContext(input, ctx, driver);
  await pattern.setup(ctx, driver);
  driver.pattern = pattern;
  return { pattern, plan: null };
}

/** The pattern answered: the step's boundary, the final output in scratch, memory written back. */
function afterPattern(input: RunLoopInput, driver: RunDriver, output: unknown): void | Promise<void> {
  driver.checkpointBoundary();
  driver.ctx.scratch.finalOutput = output;
  return writeBackMemory(input.agent, driver.ctx, input.log);
}

interface BodyEnd {
  driver: RunDriver;
  output: unknown;
  termination: TerminationReason;
  error?: KeelError;
}

/** How a run ends that threw: a `TerminateRun` says how; anything else fails the run. */
function endOfThrow(thrown: unknown, driver: RunDriver): BodyEnd {
  if (!(thrown instanceof TerminateRun)) {
    const error = asKeelError(thrown);
    return { driver, output: null, termination: { type: "error", value: error.message }, error };
  }
  const termination = thrown.termination;
  if (stopReasonOf(termination) === "completed")
    return { driver, output: lastAssistantText(driver.ctx), termination };
  const error = thrown.error ?? terminationError(termination, driver);
  return error === undefined
    ? { driver, output: null, termination }
    : { driver, output: null, termination, error };
}

/**
 * The run's result from how its body ended, RunEnd, and (given the deadline) the run's last events. Done when it
 * returns when no RunEnd hook, context finalizer or suspended run's record is to be waited for.
 */
function endBody(
  input: RunLoopInput,
  parts: RunParts & { readonly finish?: Deadline | null },
  end: BodyEnd,
): RunAttempt | RunLoopOutcome | Promise<RunAttempt | RunLoopOutcome> {
  const { agent } = input;
  const { driver, output, termination, error } = end;
  const ctx = driver.ctx;
  // The driver was made with the body's request, so this is the request agent middleware left.
  const request = driver.request as RunLoopInput["request"];
  if (error !== undefined && (error.context.runId === undefined || error.context.agentId === undefined)) {
    error.context = {
      agentId: agent.id,
      sessionId: request.sessionId,
      runId: request.runId,
      step: driver.step,
      ...error.context,
    };
  }
  const stopReason = stopReasonOf(termination);
  const result: RunResult = {
    runId: request.runId,
    finalOutput: stopReason === "completed" ? output : null,
    stopReason,
    termination,
    pendingToolCalls: termination.type === "suspended" ? driver.suspended.map(toSuspendedCall) : [],
    usage: parts.usage,
    artifacts: ctx.artifacts,
    metadata: { agentId: agent.id, sessionId: request.sessionId, steps: driver.step },
  };
  if (error !== undefined) {
    result.error = error.message;
    result.errorDetails = toErrorDetails(error);
    result.exception = error;
  }
  if (agent.hooks.runEnd.length === 0) return bodyEnded(input, parts, { driver, result });
  const context = driver.hookContext("runEnd");
  (context as { result?: RunResult }).result = result;
  return agent.hooks
    .run("runEnd", context)
    .catch((hookError: unknown) => {
      getLogger().error(`runEnd hook failed: ${(hookError as Error).message}`, { runId: request.runId });
    })
    .then(() => bodyEnded(input, parts, { driver, result }));
}

/** The body's attempt, after RunEnd; given the deadline, the run finished from it. */
function bodyEnded(
  input: RunLoopInput,
  parts: RunParts & { readonly finish?: Deadline | null },
  end: { driver: RunDriver; result: RunResult },
): RunAttempt | RunLoopOutcome | Promise<RunLoopOutcome> {
  const ctx = end.driver.ctx;
  const attempt = {
    result: end.result,
    context: ctx,
    newMessages: ctx.transcript.slice(end.driver.firstNewMessage),
  };
  return parts.finish === undefined
    ? attempt
    : finishRun(input, attempt, parts as RunParts & { readonly finish: Deadline | null });
}

/**
 * The request as the run's context shows it: without `functionInvocationKwargs` and `clientKwargs`, which reach
 * only tools and the model client through the driver. The same object when it holds neither.
 */
function withoutKwargs<R extends RunRequest>(request: R): R {
  if (request.functionInvocationKwargs === undefined && request.clientKwargs === undefined) return request;
  const { functionInvocationKwargs: _function, clientKwargs: _client, ...rest } = request;
  return rest as R;
}

/**
 * The pattern's run with the durable resume loop around it: a retryable error in a durable run rebuilds
 * the run from its latest checkpoint — from the store, never from memory — and goes on from there, up to
 * `budget.maxResumeAttempts` times (default 3). Steps the checkpoint holds are not run again.
 */
function runDurably(
  input: RunLoopInput,
  driver: RunDriver,
  first: { pattern: Pattern; plan: ResumePlan | null },
): Promise<unknown> {
  // A run that is not durable rethrows whatever the pattern throws: it needs no frame of its own, and a run
  // parked on a tool holds one suspended frame less (S3).
  if (!driver.durable) return continueRun(driver, first.pattern, first.plan);
  return resumeWhileRetryable(input, driver, first);
}

async function resumeWhileRetryable(
  input: RunLoopInput,
  driver: RunDriver,
  first: { pattern: Pattern; plan: ResumePlan | null },
): Promise<unknown> {
  const { pattern: firstPattern, plan: firstPlan } = first;
  const { agent, log } = input;
  const request = driver.request;
  let pattern = firstPattern;
  let plan = firstPlan;
  let attempts = 0;
  // Where a new run's pattern began: before its first checkpoint, a resume starts the pattern over from here.
  const startLength = input.resume === undefined ? driver.ctx.transcript.length : null;
  for (;;) {
    try {
      return await continueRun(driver, pattern, plan);
    } catch (thrown) {
      const checkpointId = driver.checkpoints?.latestCheckpointId ?? null;
      if (!driver.durable || !KeelError.isInstance(thrown) || !thrown.retryable) throw thrown;
      // The store itself stayed away past the run's patience: a resume would need it, so the run stops here.
      if (thrown.code === ERROR_CODES.STORE_UNAVAILABLE) throw thrown;
      if (checkpointId === null && !unansweredSince(driver.ctx.transcript, startLength)) throw thrown;
      const limit = request.budget?.maxResumeAttempts ?? DEFAULT_MAX_RESUME_ATTEMPTS;
      const errorType = thrown.constructor.name;
      if (attempts >= limit) {
        log.emit("run.resume_exhausted", { attempt: attempts, errorCode: thrown.code, errorType, limit });
        throw thrown;
      }
      attempts++;
      const delayMs = resumeDelayMs(thrown, attempts);
      log.emit("run.resume_attempted", {
        checkpointId,
        attempt: attempts,
        errorCode: thrown.code,
        errorType,
        delayMs,
      });
      if (delayMs > 0) await waitOrCancel(delayMs, input.scope);
      driver.checkpointBoundary();
      if (checkpointId === null) {
        // No model answer yet, so nothing happened that a checkpoint would hold: the pattern starts over.
        (driver.ctx.transcript as unknown[]).length = startLength!;
        driver.step = 0;
        pattern = agent.createPattern();
        await pattern.setup(driver.ctx, driver);
        driver.pattern = pattern;
        plan = null;
        log.emit("run.resume_succeeded", { checkpointId, attempt: attempts });
        continue;
      }
      ({ pattern, plan } = await reloadCheckpoint({ driver, store: input.sessionManager, checkpointId }));
      log.emit("run.resume_succeeded", { checkpointId, attempt: attempts });
    }
  }
}

const DEFAULT_MAX_RESUME_ATTEMPTS = 3;

/** Go on with the pattern, or with what a resume plan says is left of the run. */
function continueRun(driver: RunDriver, pattern: Pattern, plan: ResumePlan | null): Promise<unknown> {
  const request = driver.request;
  const retries = request.budget?.maxValidationRetries ?? 3;
  if (plan === null || plan.kind === "continue")
    return executeWithValidation(pattern, driver, { outputType: request.outputType, maxRetries: retries });
  if (plan.kind === "finish_step") {
    return finishInterruptedStep(driver, plan.answer, plan.prior).then(() =>
      executeWithValidation(pattern, driver, { outputType: request.outputType, maxRetries: retries }),
    );
  }
  // The last step already answered: its output is validated like any other, and a retry runs the pattern anew.
  driver.takeResumed();
  let answered = false;
  const finished: Pattern = {
    setup: () => {},
    execute: () => {
      if (answered) return pattern.execute();
      answered = true;
      return Promise.resolve(plan.output);
    },
  };
  return executeWithValidation(finished, driver, { outputType: request.outputType, maxRetries: retries });
}

/**
 * A rate limit's `retryAfterMs` is honoured before resuming; anything else backs off from 50 ms, doubling up to a
 * second, with jitter, so a resume that meets the same trouble does not spend its attempts in a tight loop and
 * many runs failing together do not resume in lockstep.
 */
function resumeDelayMs(error: KeelError, attempt: number): number {
  const retryAfterMs = (error as { retryAfterMs?: unknown }).retryAfterMs;
  if (typeof retryAfterMs === "number" && retryAfterMs > 0) return retryAfterMs;
  return Math.round(Math.min(1000, 50 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2));
}

/**
 * True when the run has a start to go back to and the model has not answered since: a retryable error before the
 * first checkpoint then restarts the run rather than failing it.
 */
function unansweredSince(transcript: readonly { role: string }[], startLength: number | null): boolean {
  if (startLength === null) return false;
  for (let index = startLength; index < transcript.length; index++)
    if (transcript[index]!.role === "assistant") return false;
  return true;
}

/** The wait before a resume is the run's work: it keeps the process alive, unlike the deadlines guarding work. */
function waitOrCancel(ms: number, scope: CancelScope): Promise<void> {
  return new Promise((resolve) => {
    const deadline = deadlines.add(
      ms,
      () => {
        stop();
        resolve();
      },
      { keepAlive: true },
    );
    const stop = scope.onCancel(() => {
      deadline.cancel();
      resolve();
    });
  });
}

/** Context assembly, the user's message, memory injection. Returns where the run's own messages start. */
async function prepareContext(input: RunLoopInput, ctx: RunContext, driver: RunDriver): Promise<number> {
  const { agent, log } = input;
  const request = ctx.runRequest;
  const startedAt = performance.now();
  log.emit("context.assemble.started", {});
  const assembled = await agent.contextAssembler.assemble(assemblyInput(input, ctx));
  const transcript = ctx.transcript;
  for (const message of assembled.transcript) transcript.push(message);
  (ctx as { sessionArtifacts: unknown }).sessionArtifacts = assembled.sessionArtifacts;
  (ctx as { assemblyMetadata: unknown }).assemblyMetadata = assembled.metadata;
  log.emit("context.assemble.completed", {
    transcriptSize: transcript.length,
    artifactCount: assembled.sessionArtifacts.length,
    durationMs: performance.now() - startedAt,
  });
  const firstNewMessage = transcript.length;
  transcript.push({ role: "user", content: request.inputText });
  log.emit("memory.inject.started", {});
  try {
    await agent.memory.inject(ctx);
    log.emit("memory.inject.completed", { viewSize: Object.keys(ctx.memoryView).length });
  } catch (error) {
    log.emit("memory.inject_failed", { error: (error as Error).message });
    if (agent.memoryOnError === "fail") throw error;
  }
  driver.checkpointBoundary();
  describeOutput(request, ctx);
  return firstNewMessage;
}

/** The output type as JSON Schema in `scratch.outputSchema`, for providers with a native structured mode. */
function describeOutput(request: RunRequest, ctx: RunContext): void {
  if (request.outputType === undefined) return;
  try {
    ctx.scratch.outputSchema = toJsonSchema(request.outputType, "output");
  } catch {
    // A schema that cannot describe itself is still validated; the provider just gets no native schema.
  }
}

function lastAssistantText(ctx: RunContext): string {
  const transcript = ctx.transcript;
  for (let index = transcript.length - 1; index >= 0; index--) {
    const message = transcript[index]!;
    if (message.role === "assistant") return message.content;
  }
  return "";
}

function toSuspendedCall(state: RunDriver["suspended"][number]): SuspendedToolCall {
  const call: SuspendedToolCall = {
    toolCallId: state.id,
    toolId: state.toolId,
    params: state.params,
    resumeMode: state.suspension?.resumeMode ?? "replay_tool_call",
  };
  if (state.suspension?.reason !== undefined) call.reason = state.suspension.reason;
  if (state.suspension?.responseSchema !== undefined) call.responseSchema = state.suspension.responseSchema;
  return call;
}

/** A clear error for terminations that are not failures of their own (limits, cancellation, blocks). */
function terminationError(termination: TerminationReason, driver: RunDriver): KeelError | undefined {
  const step = driver.step;
  switch (termination.type) {
    case "natural_end":
    case "behavior_requested":
    case "suspended":
      return undefined;
    case "cancelled":
      return new KeelError(`The run was cancelled${termination.value ? `: ${termination.value}` : ""}`, {
        code: ERROR_CODES.RUN_CANCELLED,
      });
    case "blocked":
      return new KeelError(`A tool call was blocked: ${termination.value}`, {
        code: ERROR_CODES.RUN_BLOCKED,
        hint: "A ToolGate hook blocked the call; see the tool.failed event for which one",
      });
    case "error":
      return new KeelError(termination.value, { code: ERROR_CODES.UNKNOWN });
    case "stopped":
      return stoppedError(termination.value, driver, step);
  }
}

function stoppedError(condition: string, driver: RunDriver, step: number): KeelError {
  switch (condition) {
    case "max_steps":
      return new KeelError(
        `The run reached its step limit (${driver.limits.maxSteps}) before a final answer`,
        {
          code: ERROR_CODES.MAX_STEPS,
          hint: "Raise runtime.max_steps in the agent's config or budget.maxSteps in the request",
        },
      );
    case "max_tool_calls":
      return new KeelError(`The run reached its tool call limit (${driver.request.budget?.maxToolCalls})`, {
        code: ERROR_CODES.MAX_STEPS,
        hint: "Raise budget.maxToolCalls in the request",
      });
    case "timeout":
      return new KeelError(`The run ran out of time at step ${step}`, {
        code: ERROR_CODES.RUN_TIMEOUT,
        hint: "Raise runtime.step_timeout_ms, budget.maxDurationMs or the timeout stop condition",
      });
    default:
      return new KeelError(`Stop condition ${condition} ended the run at step ${step}`, {
        code: `run.stopped.${condition}`,
        hint: `See the agent's stop_conditions (${condition})`,
      });
  }
}

function asKeelError(error: unknown): KeelError {
  if (KeelError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new KeelError(message, { code: ERROR_CODES.PATTERN, cause: error });
}
