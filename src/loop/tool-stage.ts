import type { ToolCallState } from "../contracts/hook.js";
import type { ToolCall } from "../contracts/message.js";
import {
  type BatchToolExecutor,
  isBatchToolExecutor,
  type Tool,
  type ToolExecutionResult,
} from "../contracts/tool.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { type ToolSpanScope, toolSpanScopeOf } from "../events/trace-context-carrier.js";
import { BatchToolCalls, batchesNatively, groupBatchCalls } from "../tools/batch-tool-calls.js";
import { executeToolCall } from "../tools/execute-tool-call.js";
import {
  type FunctionInvocationContext,
  invokeBatchThroughMiddleware,
  invokeThroughMiddleware,
} from "./function-invocation-context.js";
import { isResumableFailure, releaseForResume, restorePrior } from "./restore-prior-call.js";
// The stage sees the driver through its view: run-driver.ts imports this module.
import type { RunDriverView as RunDriver } from "./run-driver-view.js";
import { TerminateRun } from "./run-signals.js";
import type { ToolCallRecord } from "./run-state.js";
import { INTERRUPTED, NOT_EXECUTED, type StagedCall } from "./staged-call.js";
import { appendResults, fail, settle, settleOutcome, start, succeed, suspend } from "./tool-call-outcome.js";
import {
  admit,
  beforeExecute,
  gate,
  hasAfterExecute,
  hasBeforeExecute,
  needsGate,
  refuse,
  verdictOf,
} from "./tool-gate-stage.js";

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
export function executeToolStage(
  driver: RunDriver,
  calls: readonly ToolCall[],
  options: ToolStageOptions,
): Promise<ToolCallState[]> {
  const stage = new ToolStage(driver, calls, options.prior);
  driver.inFlight = stage.states;
  if (driver.durable || options.prior !== undefined || driver.stopRequested !== null) {
    return runStage(stage, options, null);
  }
  // The usual stage waits on nothing but its tool: it gates synchronously, then its call's promise has one
  // reaction (no `async` frame, whose registers a run parked on a tool would hold). Anything that waits goes
  // on in `runStage` from where it is.
  try {
    for (let index = 0; index < calls.length; index++) {
      const gated = gateCall(stage, index, calls[index]!);
      if (gated !== undefined) return runStage(stage, options, { index, gated });
    }
  } catch (error) {
    return Promise.reject(error);
  }
  if (!runsQuickly(stage)) return runStage(stage, options, { index: calls.length, gated: undefined });
  stage.appendsResults = options.appendResults;
  try {
    const entry = stage.allowed[0];
    if (entry === undefined) return Promise.resolve(stage.end());
    if (driver.scope.cancelled) {
      interrupt(driver, [entry]);
      return Promise.resolve(stage.end());
    }
    start(driver, entry);
    return executeOne(driver, entry).then(stage.settleOne.bind(stage));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Where a stage's gating stopped to wait: the call at `index`, whose gating `gated` finishes. */
interface GatingAt {
  index: number;
  gated: Promise<void> | undefined;
}

/** The stage in full, from the start (`from` null) or from where its gating waited. */
async function runStage(
  stage: ToolStage,
  options: ToolStageOptions,
  from: GatingAt | null,
): Promise<ToolCallState[]> {
  const driver = stage.driver;
  const calls = stage.calls;
  let first = 0;
  if (from === null) {
    // A stop asked for before the stage (an afterInference hook) runs none of the calls; each still gets its
    // one result, so the transcript stays valid for the session's next run.
    if (driver.stopRequested !== null && options.prior === undefined)
      refuseAll(driver, stage.states, options);
    // Durable runs: the model's answer (already in the transcript) is checkpointed before any call runs.
    if (driver.durable && options.prior === undefined) await driver.checkpoint("tools");
  } else {
    if (from.gated !== undefined) await from.gated;
    first = from.index + 1;
  }

  // Stage 1: ToolGate, serially, in the order the model issued the calls.
  for (let index = first; index < calls.length; index++) {
    const gated = gateCall(stage, index, calls[index]!);
    if (gated !== undefined) await gated;
  }

  // A resumed step's decisions are checkpointed before anything they allowed runs.
  if (driver.durable && options.prior !== undefined) await driver.checkpoint("tools");

  // Stages 2 and 3: BeforeToolExecute, execute (through function middleware), AfterToolExecute.
  const allowed = stage.allowed;
  allowed.length = stage.allowedCount;
  if (allowed.length > 1 && isBatchToolExecutor(driver.agent.toolExecutor)) {
    stage.terminated = await executeAllTogether(driver, allowed);
  } else if (allowed.length > 0) {
    // Several calls of a tool that batches natively run as one invokeBatch, where the first of them is.
    const batches = groupBatchCalls(allowed, describeStaged);
    // Calls allowed before a block still run: a block interrupts only the calls after it.
    let stop = false;
    // A tracing bus may run each call with its span active; undefined (and free) when the run is not traced.
    const spans = toolSpanScopeOf(driver.log.bus, driver.ctx.runId);
    const lastIndex = allowed.length - 1;
    for (let index = 0; index <= lastIndex; index++) {
      const entry = allowed[index]!;
      if (batches?.members.has(entry)) {
        const batch = batches.groups.get(entry);
        if (batch === undefined) continue;
        if (stop || driver.scope.cancelled) interrupt(driver, batch);
        else if (await executeGroup(stage, batch, index < lastIndex)) stop = true;
        continue;
      }
      if (stop || driver.scope.cancelled) {
        interrupt(driver, [entry]);
        continue;
      }
      if (hasBeforeExecute(driver, entry)) await beforeExecute(driver, entry);
      start(driver, entry);
      if (driver.durable) await markStarted(driver, [entry]);
      const result =
        spans === undefined ? await executeOne(driver, entry) : await inToolSpan(spans, driver, entry);
      if (driver.durable && isResumableFailure(result)) {
        releaseForResume(entry);
        await driver.checkpoint("tools");
        throw result.exception;
      }
      if (hasAfterExecute(driver, entry)) await settle(driver, entry, result);
      else settleOutcome(driver, entry, result);
      // After the stage's last call the checkpoint is owed rather than written: the next boundary (StepEnd, a
      // suspension, the next model call) writes it before anything else happens.
      if (driver.durable) {
        if (index < lastIndex) await driver.checkpoint("tools");
        else driver.owesCheckpoint = true;
      }
      if (entry.state.status === "suspended") stop = true;
      if (middlewareEnded(stage, entry)) stop = true;
    }
  }

  stage.appendsResults = options.appendResults;
  return stage.end();
}

/** What one tool stage carries from call to call. */
class ToolStage {
  readonly states: ToolCallState[];
  // Sized up front: a parked run holds these while its tools run, and a pushed-to `[]` grows to 17 slots.
  readonly staged: StagedCall[];
  readonly allowed: StagedCall[];
  allowedCount = 0;
  blockedReason: string | null = null;
  limitReached = false;
  /** Function middleware asked to end the run. */
  terminated = false;
  /** Append one tool-result message per finished call (model-issued calls). */
  appendsResults = false;

  constructor(
    readonly driver: RunDriver,
    readonly calls: readonly ToolCall[],
    /** What a checkpoint recorded of these calls (a resumed step). */
    readonly prior: ToolStageOptions["prior"],
  ) {
    const states: ToolCallState[] = new Array(calls.length);
    const staged: StagedCall[] = new Array(calls.length);
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index]!;
      // A resumed step's call comes back with the status its checkpoint recorded; every change from there on
      // is a transition.
      const status = prior?.get(call.id)?.status ?? "new";
      const state: ToolCallState = { id: call.id, toolId: call.name, params: call.arguments, status };
      states[index] = state;
      // Every field the call gets later is here from the start: added ones would grow a property array.
      staged[index] = {
        state,
        tool: driver.agent.tools[call.name],
        context: undefined,
        startedAt: undefined,
        durationMs: undefined,
      };
    }
    this.states = states;
    this.staged = staged;
    this.allowed = new Array(calls.length);
  }

  /** The stage's one allowed call ran: its outcome, then the stage's end. */
  settleOne(result: ToolExecutionResult): ToolCallState[] | Promise<never> {
    const entry = this.allowed[0]!;
    settleOutcome(this.driver, entry, result);
    middlewareEnded(this, entry);
    return this.end();
  }

  /** After the calls: a suspended stage checkpoints and ends the run, as a terminated one does. */
  end(): ToolCallState[] | Promise<never> {
    const driver = this.driver;
    const suspended = endStage(this, this.appendsResults);
    if (suspended !== null) {
      driver.suspendWith(suspended);
      // A suspended step always checkpoints, durable or not: a decision resumes the run from it.
      return driver.checkpoint("suspended").then(throwSuspended);
    }
    if (this.terminated) throw new TerminateRun({ type: "behavior_requested", value: "middleware" });
    return this.states;
  }
}

function throwSuspended(): never {
  throw new TerminateRun({ type: "suspended" });
}

/**
 * Whether a gated stage runs at most one call, and that one without waiting on anything but its tool: no
 * native batch, no tracing span, no BeforeToolExecute or AfterToolExecute work.
 */
function runsQuickly(stage: ToolStage): boolean {
  const driver = stage.driver;
  const allowed = stage.allowed;
  allowed.length = stage.allowedCount;
  if (allowed.length === 0) return true;
  if (allowed.length > 1) return false;
  const entry = allowed[0]!;
  return (
    !batchesNatively(entry.tool) &&
    !hasBeforeExecute(driver, entry) &&
    !hasAfterExecute(driver, entry) &&
    toolSpanScopeOf(driver.log.bus, driver.ctx.runId) === undefined
  );
}

/** Every call fails unrun and the run ends: a stop was asked for before the stage. */
function refuseAll(driver: RunDriver, states: readonly ToolCallState[], options: ToolStageOptions): never {
  for (const state of states)
    fail(driver, state, { code: ERROR_CODES.TOOL_CANCELLED, message: NOT_EXECUTED, status: "cancelled" });
  if (options.appendResults) appendResults(driver, states);
  throw new TerminateRun({ type: "behavior_requested", value: driver.stopRequested! });
}

/** Stage 1 for one call; a promise only when admitting or gating it waits on something. */
function gateCall(stage: ToolStage, index: number, call: ToolCall): Promise<void> | undefined {
  const driver = stage.driver;
  const entry = stage.staged[index]!;
  const prior = stage.prior?.get(call.id);
  if (prior !== undefined && restorePrior(driver, entry, prior)) return undefined;
  if (stage.blockedReason !== null || stage.limitReached || driver.scope.cancelled) {
    fail(driver, entry.state, { code: ERROR_CODES.TOOL_CANCELLED, message: INTERRUPTED });
    return undefined;
  }
  const admitted = admit(driver, entry, call);
  if (typeof admitted === "boolean") return admitted ? undefined : decideCall(stage, entry);
  return admitted.then((done) => (done ? undefined : decideCall(stage, entry)));
}

/** The policy, the tool-call limit and the ToolGate phase decide on an admitted call. */
function decideCall(stage: ToolStage, entry: StagedCall): Promise<void> | undefined {
  const driver = stage.driver;
  const state = entry.state;
  // The effective permission policy first: nothing a hook or an approval says lifts its refusal.
  const verdict = driver.policy === undefined ? undefined : verdictOf(driver, state.toolId);
  if (verdict?.effect === "deny") {
    refuse(driver, state, verdict);
    return undefined;
  }
  const maxToolCalls = driver.limits.maxToolCalls;
  if (maxToolCalls !== undefined && driver.ctx.usage.toolCalls + stage.allowedCount >= maxToolCalls) {
    stage.limitReached = true;
    fail(driver, state, {
      code: ERROR_CODES.MAX_STEPS,
      message: `Tool call limit (${maxToolCalls}) reached; the call was not run`,
    });
    return undefined;
  }
  if (!needsGate(driver, entry, verdict)) {
    stage.allowed[stage.allowedCount++] = entry;
    return undefined;
  }
  return gate(driver, entry, verdict).then((decision) => applyDecision(stage, entry, decision));
}

function applyDecision(
  stage: ToolStage,
  entry: StagedCall,
  decision: Awaited<ReturnType<typeof gate>>,
): void {
  if (decision === "refused") return;
  const driver = stage.driver;
  const state = entry.state;
  switch (decision?.action) {
    case undefined:
    case "allow":
      stage.allowed[stage.allowedCount++] = entry;
      break;
    case "suspend":
      suspend(driver, state, {
        reason: decision.reason,
        resumeMode: decision.resumeMode ?? "replay_tool_call",
        responseSchema: decision.responseSchema,
      });
      break;
    case "setResult":
      succeed(driver, entry, decision.result);
      break;
    case "block":
      stage.blockedReason = decision.reason;
      fail(driver, state, { code: ERROR_CODES.RUN_BLOCKED, message: `Blocked: ${decision.reason}` });
      break;
  }
}

function describeStaged(entry: StagedCall): { toolId: string; tool: Tool | undefined } {
  return { toolId: entry.state.toolId, tool: entry.tool };
}

/** Calls a block, a suspension or a cancellation before them keeps from running. */
function interrupt(driver: RunDriver, entries: readonly StagedCall[]): void {
  for (const entry of entries)
    fail(driver, entry.state, { code: ERROR_CODES.TOOL_CANCELLED, message: INTERRUPTED });
}

/** Parallel mode: every allowed call through the batch executor at once (a native batch tool's as one batch). */
function executeAllTogether(driver: RunDriver, allowed: readonly StagedCall[]): Promise<boolean> {
  const executor = driver.agent.toolExecutor as BatchToolExecutor;
  const batches = groupBatchCalls(allowed, describeStaged);
  return executeTogether(driver, allowed, batches === undefined ? executor : new BatchToolCalls(executor));
}

/** One native batch tool's calls in sequential mode; whether the calls after them are to be interrupted. */
async function executeGroup(
  stage: ToolStage,
  batch: readonly StagedCall[],
  beforeLast: boolean,
): Promise<boolean> {
  const driver = stage.driver;
  let stop = false;
  if (await executeTogether(driver, batch, new BatchToolCalls(driver.agent.toolExecutor))) {
    stage.terminated = stop = true;
  }
  if (batch.some((call) => call.state.status === "suspended")) stop = true;
  if (driver.durable && beforeLast) await driver.checkpoint("tools");
  return stop;
}

/** A MiddlewareTermination ends the run: the calls after it are interrupted, like after a block. */
function middlewareEnded(stage: ToolStage, entry: StagedCall): boolean {
  if (stage.driver.agent.middleware.function.length === 0) return false;
  if (!(entry.context as FunctionInvocationContext).terminated) return false;
  stage.terminated = true;
  return true;
}

/**
 * After the calls: results appended, the driver told, and the run ended when it was cancelled, blocked or out
 * of tool calls. Returns the suspended calls, if any (the caller checkpoints them), else null.
 */
function endStage(stage: ToolStage, appendsResults: boolean): ToolCallState[] | null {
  const driver = stage.driver;
  const states = stage.states;
  // A cancelled run waits for no decision: its suspended calls end cancelled, each with its one result.
  if (driver.scope.cancelled) {
    for (const state of states)
      if (state.status === "suspended")
        fail(driver, state, { code: ERROR_CODES.TOOL_CANCELLED, message: INTERRUPTED, status: "cancelled" });
  }
  if (appendsResults) appendResults(driver, states);
  driver.noteToolStep(states);
  driver.refreshPolicy();
  if (driver.scope.cancelled) throw new TerminateRun(driver.scope.termination!);
  if (stage.blockedReason !== null) throw new TerminateRun({ type: "blocked", value: stage.blockedReason });
  if (stage.limitReached) throw new TerminateRun({ type: "stopped", value: "max_tool_calls" });
  return states.some((state) => state.status === "suspended")
    ? states.filter((state) => state.status === "suspended")
    : null;
}

/** One call through function middleware when there is some, else straight through the executor. */
function executeOne(driver: RunDriver, entry: StagedCall): Promise<ToolExecutionResult> {
  const middleware = driver.agent.middleware.function;
  return middleware.length > 0
    ? invokeThroughMiddleware(middleware, entry.context as FunctionInvocationContext, execute)
    : executeToolCall(driver.agent.toolExecutor, entry.context!);
}

/** One call with its span active (kept apart so the untraced path makes no closure). */
function inToolSpan(
  spans: ToolSpanScope,
  driver: RunDriver,
  entry: StagedCall,
): Promise<ToolExecutionResult> {
  return spans.inToolSpan(entry.state.id, () => executeOne(driver, entry));
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
  for (const entry of entries) start(driver, entry);
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
    await settle(driver, entry, result);
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
