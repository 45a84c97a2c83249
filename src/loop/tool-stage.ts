// Long because a step's tool execution is one procedure: gate, execute and record every call of a step in one place.
import { nearMatch } from "../config/near-match.js";
import type { ToolCallState, ToolGateDecision } from "../contracts/hook.js";
import type { ToolCall } from "../contracts/message.js";
import type { ResumeMode } from "../contracts/run-types.js";
import {
  type BatchToolExecutor,
  isBackgroundTool,
  isBatchToolExecutor,
  isPolicyToolExecutor,
  isToolResult,
  type Tool,
  type ToolExecutionResult,
  type ToolResult,
} from "../contracts/tool.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { getLogger } from "../logging/logger.js";
import type { ToolVerdict } from "../permissions/effective-policy.js";
import { offloadLargeOutput } from "../run-folders/large-output.js";
import { summarizeValue, type ToolLogLine } from "../run-folders/run-folder.js";
import { BatchToolCalls, groupBatchCalls } from "../tools/batch-tool-calls.js";
import { executeToolCall } from "../tools/execute-tool-call.js";
import { asToolError } from "../tools/executors/safe-tool-executor.js";
import { formatToolError, formatToolResult } from "../tools/format-tool-result.js";
import { isSuspendToolCall } from "../tools/suspend-tool-call.js";
import { toJsonValue } from "../tools/to-json-value.js";
import { backgroundJobSlot, resumesBackgroundJob } from "./background-tool-call.js";
import { isApproval } from "./decisions.js";
import {
  type FunctionInvocationContext,
  invokeBatchThroughMiddleware,
  invokeThroughMiddleware,
} from "./function-invocation-context.js";
// The stage sees the driver through its view: run-driver.ts imports this module.
import type { RunDriverView as RunDriver } from "./run-driver-view.js";
import { TerminateRun } from "./run-signals.js";
import type { ToolCallRecord } from "./run-state.js";
import { transitionToolCall } from "./run-status.js";
import type { ToolCallContext } from "./tool-call-context.js";

export const INTERRUPTED = "[Tool execution was interrupted]";
/** The result of a call a hook's stop, asked for before the tool stage, kept from running. */
export const NOT_EXECUTED = "[not executed: run stopped]";

interface StagedCall {
  state: ToolCallState;
  tool: Tool | undefined;
  context: ToolCallContext | undefined;
}

export interface ToolStageOptions {
  /** Append one tool-result message per call to the transcript (model-issued calls). */
  appendResults: boolean;
  /** Resume inputs by call id (replayed calls). */
  resumeInputs?: ReadonlyMap<string, unknown>;
  /** What a checkpoint recorded of these calls (a resumed step): finished calls are not run again. */
  prior?: ReadonlyMap<string, ToolCallRecord>;
}

/**
 * The three-stage tool execution of one step: ToolGate serially per call, then BeforeToolExecute and
 * execution — one call after another (sequential mode), or together through a batch executor (parallel mode)
 * — then AfterToolExecute. Every call ends with exactly one result; a block, a limit, a cancellation or a
 * suspension is thrown as `TerminateRun` after the results are recorded.
 */
export async function executeToolStage(
  driver: RunDriver,
  calls: readonly ToolCall[],
  options: ToolStageOptions,
): Promise<ToolCallState[]> {
  // Sized up front: a parked run holds these while its tools run, and a pushed-to `[]` grows to 17 slots.
  const staged: StagedCall[] = new Array(calls.length);
  const allowed: StagedCall[] = new Array(calls.length);
  let allowedCount = 0;
  let blockedReason: string | null = null;
  let limitReached = false;
  const maxToolCalls = driver.limits.maxToolCalls;
  const states: ToolCallState[] = new Array(calls.length);
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index]!;
    // A resumed step's call comes back with the status its checkpoint recorded; every change from there on is
    // a transition.
    const status = options.prior?.get(call.id)?.status ?? "new";
    const state: ToolCallState = { id: call.id, toolId: call.name, params: call.arguments, status };
    states[index] = state;
    staged[index] = { state, tool: driver.agent.tools[call.name], context: undefined };
  }
  driver.inFlight = states;
  // A stop asked for before the stage (an afterInference hook) runs none of the calls; each still gets its one
  // result, so the transcript stays valid for the session's next run.
  const stopAsked = driver.stopRequested;
  if (stopAsked !== null && options.prior === undefined) {
    for (const state of states)
      fail(driver, state, ERROR_CODES.TOOL_CANCELLED, NOT_EXECUTED, undefined, "cancelled");
    if (options.appendResults) appendResults(driver, states);
    throw new TerminateRun({ type: "behavior_requested", value: stopAsked });
  }
  // Durable runs: the model's answer (already in the transcript) is checkpointed before any call runs.
  if (driver.durable && options.prior === undefined) await driver.checkpoint("tools");

  // Stage 1: ToolGate, serially, in the order the model issued the calls.
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index]!;
    const entry = staged[index]!;
    const state = entry.state;
    const prior = options.prior?.get(call.id);
    if (prior !== undefined && restorePrior(driver, entry, prior)) continue;
    if (blockedReason !== null || limitReached || driver.scope.cancelled) {
      fail(driver, state, ERROR_CODES.TOOL_CANCELLED, INTERRUPTED);
      continue;
    }
    const admitted = admit(driver, entry, call);
    if (typeof admitted === "boolean" ? admitted : await admitted) continue;
    // The effective permission policy first: nothing a hook or an approval says lifts its refusal.
    const verdict = driver.policy === undefined ? undefined : verdictOf(driver, state.toolId);
    if (verdict?.effect === "deny") {
      refuse(driver, state, verdict);
      continue;
    }
    if (maxToolCalls !== undefined && driver.ctx.usage.toolCalls + allowedCount >= maxToolCalls) {
      limitReached = true;
      fail(
        driver,
        state,
        ERROR_CODES.MAX_STEPS,
        `Tool call limit (${maxToolCalls}) reached; the call was not run`,
      );
      continue;
    }
    const decision = needsGate(driver, entry, verdict) ? await gate(driver, entry, verdict) : undefined;
    if (decision === "refused") continue;
    switch (decision?.action) {
      case undefined:
      case "allow":
        allowed[allowedCount++] = entry;
        break;
      case "suspend":
        suspend(
          driver,
          state,
          decision.reason,
          decision.resumeMode ?? "replay_tool_call",
          decision.responseSchema,
        );
        break;
      case "setResult":
        succeed(driver, entry, decision.result, 0);
        break;
      case "block":
        blockedReason = decision.reason;
        fail(driver, state, ERROR_CODES.RUN_BLOCKED, `Blocked: ${decision.reason}`);
        break;
    }
  }

  // A resumed step's decisions are checkpointed before anything they allowed runs.
  if (driver.durable && options.prior !== undefined) await driver.checkpoint("tools");

  // Stages 2 and 3: BeforeToolExecute, execute (through function middleware), AfterToolExecute.
  allowed.length = allowedCount;
  let terminated = false;
  if (allowedCount > 0) {
    const executor = driver.agent.toolExecutor;
    const middleware = driver.agent.middleware.function;
    // Several calls of a tool that batches natively run as one invokeBatch, where the first of them is.
    const batches = groupBatchCalls(allowed, (entry) => ({ toolId: entry.state.toolId, tool: entry.tool }));
    if (isBatchToolExecutor(executor) && allowed.length > 1) {
      const together = batches === undefined ? executor : new BatchToolCalls(executor);
      terminated = await executeTogether(driver, allowed, together);
    } else {
      // Calls allowed before a block still run: a block interrupts only the calls after it.
      let stop = false;
      const lastIndex = allowed.length - 1;
      for (let index = 0; index <= lastIndex; index++) {
        const entry = allowed[index]!;
        const batch = batches?.groups.get(entry);
        if (batch === undefined && batches?.members.has(entry)) continue;
        if (stop || driver.scope.cancelled) {
          for (const call of batch ?? [entry])
            fail(driver, call.state, ERROR_CODES.TOOL_CANCELLED, INTERRUPTED);
          continue;
        }
        if (batch !== undefined) {
          if (await executeTogether(driver, batch, new BatchToolCalls(executor))) terminated = stop = true;
          if (batch.some((call) => call.state.status === "suspended")) stop = true;
          if (driver.durable && index < lastIndex) await driver.checkpoint("tools");
          continue;
        }
        if (hasBeforeExecute(driver, entry)) await beforeExecute(driver, entry);
        const startedAt = start(driver, entry);
        if (driver.durable) await markStarted(driver, [entry]);
        const result =
          middleware.length > 0
            ? await invokeThroughMiddleware(middleware, entry.context as FunctionInvocationContext, execute)
            : await executeToolCall(executor, entry.context!);
        if (driver.durable && isResumableFailure(result)) {
          releaseForResume(entry);
          await driver.checkpoint("tools");
          throw result.exception;
        }
        if (hasAfterExecute(driver, entry)) await settle(driver, entry, result, startedAt);
        else settleOutcome(driver, entry, result, performance.now() - startedAt, undefined);
        // After the stage's last call the checkpoint is owed rather than written: the next boundary (StepEnd, a
        // suspension, the next model call) writes it before anything else happens.
        if (driver.durable) {
          if (index < lastIndex) await driver.checkpoint("tools");
          else driver.owesCheckpoint = true;
        }
        if (entry.state.status === "suspended") stop = true;
        // A MiddlewareTermination ends the run: the calls after it are interrupted, like after a block.
        if (middleware.length > 0 && (entry.context as FunctionInvocationContext).terminated) {
          terminated = true;
          stop = true;
        }
      }
    }
  }

  // A cancelled run waits for no decision: its suspended calls end cancelled, each with its one result.
  if (driver.scope.cancelled) {
    for (const state of states)
      if (state.status === "suspended")
        fail(driver, state, ERROR_CODES.TOOL_CANCELLED, INTERRUPTED, undefined, "cancelled");
  }
  if (options.appendResults) appendResults(driver, states);
  driver.noteToolStep(states);
  driver.refreshPolicy();
  if (driver.scope.cancelled) throw new TerminateRun(driver.scope.termination!);
  if (blockedReason !== null) throw new TerminateRun({ type: "blocked", value: blockedReason });
  if (limitReached) throw new TerminateRun({ type: "stopped", value: "max_tool_calls" });
  if (states.some((state) => state.status === "suspended")) {
    driver.suspendWith(states.filter((state) => state.status === "suspended"));
    // A suspended step always checkpoints, durable or not: a decision resumes the run from it.
    await driver.checkpoint("suspended");
    throw new TerminateRun({ type: "suspended" });
  }
  if (terminated) throw new TerminateRun({ type: "behavior_requested", value: "middleware" });
  return states;
}

/** The executor of a call that goes through function middleware. */
function execute(context: FunctionInvocationContext): Promise<ToolExecutionResult> {
  return executeToolCall(context.run.toolExecutor, context);
}

/**
 * Calls executed together through a batch executor (parallel mode, or one batch tool's calls): BeforeToolExecute
 * for each, one batch, then each call settled. Returns whether function middleware asked to end the run.
 */
async function executeTogether(
  driver: RunDriver,
  entries: readonly StagedCall[],
  executor: BatchToolExecutor,
): Promise<boolean> {
  const middleware = driver.agent.middleware.function;
  for (const entry of entries) await beforeExecute(driver, entry);
  const started = entries.map((entry) => start(driver, entry));
  if (driver.durable) await markStarted(driver, entries);
  const contexts = entries.map((entry) => entry.context!);
  const results =
    middleware.length > 0
      ? await invokeBatchThroughMiddleware(middleware, contexts as FunctionInvocationContext[], executor)
      : await executor.executeBatch(contexts);
  let resumable: unknown;
  let terminated = false;
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index]!;
    const result = results[index]!;
    if (driver.durable && isResumableFailure(result)) {
      resumable ??= result.exception;
      releaseForResume(entry);
      continue;
    }
    await settle(driver, entry, result, started[index]!);
    if (middleware.length > 0 && (entry.context as FunctionInvocationContext).terminated) terminated = true;
  }
  // A batch counts as one step: one checkpoint for all its calls, owed until the next boundary.
  if (resumable !== undefined) {
    await driver.checkpoint("tools");
    throw resumable;
  }
  if (driver.durable) driver.owesCheckpoint = true;
  return terminated;
}

/**
 * A call a checkpoint recorded, in a resumed step. Finished calls keep their outcome and are not run again;
 * a started call of a tool that is not idempotent has an unknown outcome and waits for a decision;
 * anything else (not started, or idempotent) runs normally. Returns whether the call needs nothing more.
 */
function restorePrior(driver: RunDriver, entry: StagedCall, prior: ToolCallRecord): boolean {
  const { state } = entry;
  switch (prior.status) {
    case "succeeded":
      state.result = prior.result;
      driver.ctx.toolResults.push({
        toolCallId: state.id,
        toolId: state.toolId,
        result: prior.result,
        success: true,
      });
      return true;
    case "failed":
    case "cancelled":
      state.error = prior.error ?? { code: ERROR_CODES.TOOL_ERROR, message: "failed" };
      // A failed call that returned a ToolResult (`ok: false`) shows the model that result again.
      if (prior.result !== undefined) state.result = prior.result;
      return true;
    case "suspended":
      return prior.decision === undefined ? staySuspended(state, prior) : applyDecision(driver, entry, prior);
    case "resuming":
      // Decided but not started when the run checkpointed: the decision applies again.
      if (prior.decision !== undefined) return applyDecision(driver, entry, prior);
      if (resumesBackgroundJob(entry.tool, state, prior)) return false;
      if (entry.tool?.durableIdempotent !== false) return false;
      return outcomeUnknown(driver, entry);
    case "running":
      if (resumesBackgroundJob(entry.tool, state, prior)) return false;
      if (entry.tool?.durableIdempotent !== false) return false;
      return outcomeUnknown(driver, entry);
    case "new":
      return prior.decision === undefined ? false : applyDecision(driver, entry, prior);
  }
}

/** A started call of a tool that is not idempotent, caught by a stop: it waits for a decision. */
function outcomeUnknown(driver: RunDriver, entry: StagedCall): true {
  const { state } = entry;
  driver.log.emit("tool.outcome_unknown", {
    toolCallId: state.id,
    toolId: state.toolId,
    hint: "The run stopped while this call ran; decide whether to run it again, give its result, or deny it",
  });
  suspend(
    driver,
    state,
    `The outcome of '${state.toolId}' is unknown: the run stopped while it ran and the tool is not idempotent`,
    "replay_tool_call",
    undefined,
  );
  return true;
}

/** A suspended call no decision has reached yet: it waits on. */
function staySuspended(state: ToolCallState, prior: ToolCallRecord): true {
  state.suspension = prior.suspension ?? { resumeMode: "replay_tool_call" };
  return true;
}

/**
 * A decided call: deny cancels it with a result saying so; result makes `value` its result; approve
 * replays it in its resume mode — with the original arguments (`replay_tool_call`), with `value` as its result
 * (`use_decision_as_tool_result`), or with `value` as its arguments, validated again (`pass_decision_to_tool`).
 * A replayed call goes through the whole pipeline with `resumeInput` set. Returns whether it needs nothing more.
 */
function applyDecision(driver: RunDriver, entry: StagedCall, prior: ToolCallRecord): boolean {
  const { state } = entry;
  const decision = prior.decision!;
  state.resumeInput = decision;
  // A suspended call goes on through `resuming`; one a checkpoint caught there (or an older checkpoint's `new`
  // call with its decision) is already past it.
  if (state.status === "suspended") state.status = transitionToolCall(state.status, "resuming");
  switch (decision.action) {
    case "deny":
      fail(driver, state, ERROR_CODES.TOOL_DENIED, deniedMessage(decision.reason), undefined, "cancelled");
      return true;
    case "result":
      succeed(driver, entry, decision.value, 0);
      return true;
    case "approve": {
      const mode = prior.suspension?.resumeMode ?? "replay_tool_call";
      if (mode === "use_decision_as_tool_result") {
        succeed(driver, entry, decision.value ?? null, 0);
        return true;
      }
      const value = decision.value;
      if (
        mode === "pass_decision_to_tool" &&
        typeof value === "object" &&
        value !== null &&
        !Array.isArray(value)
      )
        state.params = value as Record<string, unknown>;
      return false;
    }
  }
}

function deniedMessage(reason: string | undefined): string {
  return `The call was denied${reason ? `: ${reason}` : ""}`;
}

/** Durable runs: a started call of a non-idempotent tool is checkpointed as `running` before it runs. */
async function markStarted(driver: RunDriver, entries: readonly StagedCall[]): Promise<void> {
  let risky = false;
  for (const entry of entries) {
    if (entry.tool!.durableIdempotent !== false) continue;
    driver.warnNotIdempotent(entry.state.toolId);
    risky = true;
  }
  if (risky) await driver.checkpoint("tools");
}

/**
 * A durable run hands a tool's rate limit or unavailability to its resume loop rather than to the model: the
 * call did not happen, and the run resumes from its latest checkpoint and runs it again.
 */
function isResumableFailure(result: ToolExecutionResult): boolean {
  if (result.success || result.metadata.cancelled === true) return false;
  const code = (result.exception as { code?: unknown } | undefined)?.code;
  return code === ERROR_CODES.TOOL_RATE_LIMIT || code === ERROR_CODES.TOOL_UNAVAILABLE;
}

/** The call did not happen: it goes back to `new` for the checkpoint the resume continues from. */
function releaseForResume(entry: StagedCall): void {
  entry.context!.release();
  // Not a transition: the start is undone, as if it never happened, for the checkpoint the resume reads.
  entry.state.status = "new";
}

/**
 * The checks before the gate: a known tool, parseable and valid arguments. A refusal fails only the call.
 * Synchronous unless the tool's validator is; most are, and the step then allocates no promise here.
 */
function admit(driver: RunDriver, entry: StagedCall, call: ToolCall): boolean | Promise<boolean> {
  const { state, tool } = entry;
  if (tool === undefined) {
    const names = Object.keys(driver.agent.tools);
    const suggestion = nearMatch(call.name, names);
    const message =
      `Tool '${call.name}' is not available.` +
      (suggestion ? ` Did you mean '${suggestion}'?` : "") +
      ` Available tools: ${names.join(", ") || "none"}`;
    fail(driver, state, ERROR_CODES.TOOL_NOT_FOUND, message);
    return true;
  }
  if (call.argumentsError !== undefined) {
    fail(
      driver,
      state,
      ERROR_CODES.TOOL_VALIDATION,
      `Malformed arguments for tool '${call.name}': ${call.argumentsError}`,
    );
    return true;
  }
  if (tool.validateParams) {
    const outcome = tool.validateParams(state.params);
    if (outcome instanceof Promise) return outcome.then((settled) => applyValidation(driver, entry, settled));
    return applyValidation(driver, entry, outcome);
  }
  entry.context = driver.toolCallContext(state, tool, state.resumeInput);
  return false;
}

function applyValidation(
  driver: RunDriver,
  entry: StagedCall,
  outcome: { ok: true; value: unknown } | { ok: false; error: string },
): boolean {
  const { state } = entry;
  if (!outcome.ok) {
    fail(
      driver,
      state,
      ERROR_CODES.TOOL_VALIDATION,
      `Invalid arguments for tool '${state.toolId}':\n${outcome.error}`,
    );
    return true;
  }
  state.params = outcome.value as Record<string, unknown>;
  entry.context = driver.toolCallContext(state, entry.tool!, state.resumeInput);
  return false;
}

/** The policy's verdict on a tool (own keys only: a tool id may be any string). */
function verdictOf(driver: RunDriver, toolId: string): ToolVerdict | undefined {
  const tools = driver.policy!.tools;
  return Object.hasOwn(tools, toolId) ? tools[toolId] : undefined;
}

/**
 * A call the effective policy refuses: a `tool.permission_denied` result the model sees, naming the rule; the
 * run goes on. The call never started, so there is no `tool.started`.
 */
function refuse(driver: RunDriver, state: ToolCallState, verdict: ToolVerdict): void {
  fail(
    driver,
    state,
    ERROR_CODES.PERMISSION_DENIED,
    verdict.message ?? `Tool '${state.toolId}' is refused by rule ${verdict.rule}`,
    undefined,
    "failed",
    verdict.rule,
  );
}

/** Whether the gate has anything to ask: hooks, an approval rule, or the executor's policy. */
function needsGate(driver: RunDriver, entry: StagedCall, verdict: ToolVerdict | undefined): boolean {
  return (
    verdict?.effect === "ask" ||
    driver.agent.hooks.toolGate.length > 0 ||
    entry.context!.executionSpec.approvalMode === "always" ||
    entry.tool!.requiresApproval !== undefined ||
    isPolicyToolExecutor(driver.agent.toolExecutor)
  );
}

function hasBeforeExecute(driver: RunDriver, entry: StagedCall): boolean {
  return driver.agent.hooks.beforeToolExecute.length > 0 || entry.tool!.beforeInvoke !== undefined;
}

function hasAfterExecute(driver: RunDriver, entry: StagedCall): boolean {
  const tool = entry.tool!;
  return (
    driver.agent.hooks.afterToolExecute.length > 0 ||
    tool.afterInvoke !== undefined ||
    tool.fallback !== undefined
  );
}

/**
 * Gate hooks first (the first non-allow wins), then approval, then the executor's policy. A policy denial is
 * a refusal, not a block: it fails only this call and the run goes on ("refused").
 */
async function gate(
  driver: RunDriver,
  entry: StagedCall,
  policyVerdict: ToolVerdict | undefined,
): Promise<ToolGateDecision | "refused" | undefined> {
  const verdict = await askGate(driver, entry, policyVerdict);
  if (verdict === "refused" || verdict?.action !== "suspend") return verdict;
  // A decision that sticks for this tool answers the suspension at once (`always`).
  const { state } = entry;
  const sticky = driver.stickyDecision(state.toolId);
  if (sticky === undefined) return verdict;
  if (sticky === "deny") {
    fail(
      driver,
      state,
      ERROR_CODES.TOOL_DENIED,
      deniedMessage(`calls of '${state.toolId}' are always denied`),
      undefined,
      "cancelled",
    );
    return "refused";
  }
  state.resumeInput = { toolCallId: state.id, action: "approve", reason: "always approved" };
  entry.context = driver.toolCallContext(state, entry.tool!, state.resumeInput);
  return undefined;
}

async function askGate(
  driver: RunDriver,
  entry: StagedCall,
  policyVerdict: ToolVerdict | undefined,
): Promise<ToolGateDecision | "refused" | undefined> {
  const { state } = entry;
  const tool = entry.tool!;
  const context = entry.context!;
  // A destructive call the config enabled still waits for an approval (merge rule 5); no hook answers for it.
  if (policyVerdict?.effect === "ask" && !isApproval(state.resumeInput))
    return {
      action: "suspend",
      reason: policyVerdict.message ?? `Tool '${state.toolId}' requires approval`,
      resumeMode: "replay_tool_call",
    };
  if (driver.agent.hooks.toolGate.length > 0) {
    const decision = await driver.agent.hooks.gate(driver.hookContext("toolGate", state), state);
    if (decision !== undefined) return decision;
  }
  const spec = context.executionSpec;
  // An approved call replays through the gate without asking again.
  const needsApproval =
    !isApproval(state.resumeInput) &&
    (spec.approvalMode === "always" ||
      (tool.requiresApproval !== undefined && (await tool.requiresApproval(state.params, context))));
  if (needsApproval)
    return {
      action: "suspend",
      reason: `Tool '${state.toolId}' requires approval`,
      resumeMode: "replay_tool_call",
    };
  const executor = driver.agent.toolExecutor;
  if (isPolicyToolExecutor(executor)) {
    const policy = await executor.evaluatePolicy(context);
    if (!policy.allowed) {
      fail(
        driver,
        state,
        ERROR_CODES.PERMISSION_DENIED,
        `Policy denied tool '${state.toolId}': ${policy.reason}`,
      );
      return "refused";
    }
  }
  return undefined;
}

async function beforeExecute(driver: RunDriver, entry: StagedCall): Promise<void> {
  if (driver.agent.hooks.beforeToolExecute.length > 0) {
    await driver.agent.hooks.run("beforeToolExecute", driver.hookContext("beforeToolExecute", entry.state));
  }
  await entry.tool!.beforeInvoke?.(entry.state.params, entry.context!);
}

function start(driver: RunDriver, entry: StagedCall): number {
  const { state } = entry;
  state.status = transitionToolCall(state.status, "running");
  entry.context!.params = state.params;
  if (isBackgroundTool(entry.tool!)) entry.context!.backgroundJob = backgroundJobSlot(driver, state);
  // A call counts once it runs, whatever its outcome; refusals and interruptions never ran.
  driver.ctx.usage.toolCalls++;
  driver.log.emit("tool.started", { toolCallId: state.id, toolId: state.toolId, params: state.params });
  return performance.now();
}

async function settle(
  driver: RunDriver,
  entry: StagedCall,
  result: ToolExecutionResult,
  startedAt: number,
): Promise<void> {
  const { state } = entry;
  const tool = entry.tool!;
  const context = entry.context!;
  const durationMs = performance.now() - startedAt;
  if (tool.afterInvoke) {
    try {
      await tool.afterInvoke(
        state.params,
        context,
        result.data,
        result.success ? undefined : result.exception,
      );
    } catch (error) {
      // afterInvoke is advisory: its failure never changes the call's outcome, but it is never hidden either.
      getLogger().warn(`afterInvoke of tool '${state.toolId}' failed: ${(error as Error)?.message}`, {
        toolCallId: state.id,
        toolId: state.toolId,
        cause: error,
      });
    }
  }
  let recovered: unknown;
  if (
    !result.success &&
    tool.fallback &&
    !isSuspendToolCall(result.exception) &&
    result.metadata.cancelled !== true
  ) {
    const exception = asToolError(result.exception ?? new Error(result.error ?? "tool failed"), state.toolId);
    recovered = await tool.fallback(exception, state.params, context);
  }
  settleOutcome(driver, entry, result, durationMs, recovered);
  if (driver.agent.hooks.afterToolExecute.length > 0) {
    await driver.agent.hooks.run("afterToolExecute", driver.hookContext("afterToolExecute", state));
  }
}

/** Record what the execution ended with: a result, a suspension, a cancellation or a failure. */
function settleOutcome(
  driver: RunDriver,
  entry: StagedCall,
  result: ToolExecutionResult,
  durationMs: number,
  recovered: unknown,
): void {
  const { state } = entry;
  entry.context!.release();
  if (result.success) {
    succeed(driver, entry, result.data, durationMs);
  } else if (isSuspendToolCall(result.exception)) {
    const suspension = result.exception;
    suspend(driver, state, suspension.reason, suspension.resumeMode, suspension.responseSchema);
  } else if (recovered !== undefined) {
    succeed(driver, entry, recovered, durationMs);
  } else if (result.exception === undefined && isToolResult(result.data)) {
    failWithResult(driver, entry, result.data, durationMs);
  } else {
    const exception = asToolError(result.exception ?? new Error(result.error ?? "tool failed"), state.toolId);
    if (result.metadata.cancelled === true) {
      fail(driver, state, ERROR_CODES.TOOL_CANCELLED, exception.message, durationMs, "cancelled");
    } else {
      // A sandbox or permission refusal inside the tool names its rule too.
      const rule = (result.exception as { rule?: unknown } | undefined)?.rule;
      fail(
        driver,
        state,
        exception.code,
        exception.message,
        durationMs,
        "failed",
        typeof rule === "string" ? rule : undefined,
      );
    }
  }
}

function succeed(driver: RunDriver, entry: StagedCall, output: unknown, durationMs: number): void {
  const { state } = entry;
  const json = asJson(driver, state, output, durationMs);
  if (json === NOT_JSON) return;
  state.status = transitionToolCall(state.status, "succeeded");
  const data = offloaded(driver, state, json);
  state.result = data;
  driver.ctx.toolResults.push({ toolCallId: state.id, toolId: state.toolId, result: data, success: true });
  driver.log.emit("tool.completed", { toolCallId: state.id, toolId: state.toolId, result: data, durationMs });
  if (driver.runFolder !== undefined) logCall(driver, state, "succeeded", durationMs, data);
}

const NOT_JSON = Symbol("not JSON");

/**
 * A result in its JSON form, checked here once because the transcript, the events and every store hold it as
 * JSON (a BigInt or a cycle would otherwise lose the run's final write on a persistent store only). A result
 * with no JSON form fails the call with a typed error the model sees; the run goes on.
 */
function asJson(
  driver: RunDriver,
  state: ToolCallState,
  output: unknown,
  durationMs: number,
): unknown | typeof NOT_JSON {
  // Most results are text: nothing to walk, nothing to allocate.
  if (typeof output === "string" || output === undefined) return output;
  const converted = toJsonValue(output);
  if (converted.ok) return converted.value;
  const { path, reason } = converted.problem;
  const message = `Tool '${state.toolId}' returned a value JSON cannot hold: ${reason} at ${path}`;
  const hint =
    "The call ran but its result cannot be recorded; the tool must return plain data (strings, numbers, " +
    "booleans, null, arrays, objects) without cycles, functions or symbols";
  getLogger().warn(`${message}; the call fails`, { toolCallId: state.id, toolId: state.toolId, path, hint });
  fail(
    driver,
    state,
    ERROR_CODES.TOOL_RESULT_NOT_JSON,
    message,
    durationMs,
    "failed",
    undefined,
    undefined,
    hint,
  );
  return NOT_JSON;
}

/**
 * A large output becomes a run artifact before anything records it: the transcript, the events and the logs see
 * only its reference. Anything within `large_output_bytes` is returned as it is.
 */
function offloaded(driver: RunDriver, state: ToolCallState, output: unknown): unknown {
  const large = offloadLargeOutput(
    output,
    driver.largeOutputBytes,
    { toolCallId: state.id, toolId: state.toolId },
    driver.runFolder,
  );
  if (large === undefined) return output;
  driver.ctx.artifacts.push(large.artifact);
  driver.log.emit("artifact", {
    name: large.artifact.name,
    kind: large.artifact.kind,
    payload: large.result.artifacts[large.result.artifacts.length - 1],
  });
  return large.result;
}

/**
 * A call whose ToolResult says `ok: false`: failed — `tool.failed` with the result's error code, counted
 * as an error — while the transcript keeps the result itself, so the model sees its summary and data.
 */
function failWithResult(driver: RunDriver, entry: StagedCall, output: ToolResult, durationMs: number): void {
  const json = asJson(driver, entry.state, output, durationMs);
  if (json === NOT_JSON) return;
  const data = offloaded(driver, entry.state, json) as ToolResult;
  entry.state.result = data;
  const error = data.error ?? { code: ERROR_CODES.TOOL_ERROR, message: data.summary };
  fail(driver, entry.state, error.code, error.message, durationMs, "failed", undefined, data);
}

/** A finished call's line in the run folder's `tools.jsonl` (and `errors.jsonl`). */
function logCall(
  driver: RunDriver,
  state: ToolCallState,
  status: ToolLogLine["status"],
  durationMs: number,
  data: unknown,
  rule?: string,
): void {
  const line: ToolLogLine = {
    toolCallId: state.id,
    toolId: state.toolId,
    toolset: driver.agent.toolsets?.[state.toolId] ?? null,
    status,
    startedAt: new Date(Date.now() - durationMs).toISOString(),
    durationMs,
    summary: status === "succeeded" ? summarizeValue(data) : summarizeValue(state.error?.message ?? ""),
    artifacts: isToolResult(data) ? data.artifacts : [],
  };
  if (status !== "succeeded") {
    line.error = {
      code: state.error?.code ?? ERROR_CODES.TOOL_ERROR,
      message: state.error?.message ?? "failed",
    };
    if (rule !== undefined) line.error.rule = rule;
  }
  driver.runFolder!.recordTool(line);
}

function fail(
  driver: RunDriver,
  state: ToolCallState,
  code: string,
  message: string,
  durationMs?: number,
  status: "failed" | "cancelled" = "failed",
  rule?: string,
  result?: ToolResult,
  hint?: string,
): void {
  state.status = transitionToolCall(state.status, status);
  state.error = hint === undefined ? { code, message } : { code, message, hint };
  const payload: Record<string, unknown> = {
    toolCallId: state.id,
    toolId: state.toolId,
    error: message,
    code,
  };
  if (rule !== undefined) payload.rule = rule;
  if (durationMs !== undefined) payload.durationMs = durationMs;
  driver.log.emit("tool.failed", payload);
  if (driver.runFolder !== undefined) logCall(driver, state, status, durationMs ?? 0, result, rule);
}

function suspend(
  driver: RunDriver,
  state: ToolCallState,
  reason: string | undefined,
  resumeMode: ResumeMode,
  responseSchema: Record<string, unknown> | undefined,
): void {
  state.status = transitionToolCall(state.status, "suspended");
  state.suspension = { resumeMode };
  if (reason !== undefined) state.suspension.reason = reason;
  if (responseSchema !== undefined) state.suspension.responseSchema = responseSchema;
  const payload: Record<string, unknown> = {
    toolCallId: state.id,
    toolId: state.toolId,
    params: state.params,
    resumeMode,
  };
  if (reason !== undefined) payload.reason = reason;
  driver.log.emit("tool.suspended", payload);
}

/** One tool-result message per finished call, in the order the model issued them. */
function appendResults(driver: RunDriver, states: readonly ToolCallState[]): void {
  for (const state of states) {
    if (state.status === "suspended") continue;
    const failed = state.status !== "succeeded";
    // A failed call shows its result when it returned one (`ok: false`), else its error.
    const content =
      !failed || state.result !== undefined
        ? formatToolResult(state.result)
        : state.error?.message === INTERRUPTED || state.error?.message === NOT_EXECUTED
          ? state.error.message
          : formatToolError(
              state.error?.code ?? ERROR_CODES.TOOL_ERROR,
              state.error?.message ?? "failed",
              state.error?.hint,
            );
    driver.appendMessage(
      failed
        ? { role: "tool", toolCallId: state.id, toolName: state.toolId, content, isError: true }
        : { role: "tool", toolCallId: state.id, toolName: state.toolId, content },
    );
  }
}
