import type { Message, ToolCall } from "../../contracts/message.js";
import type { CostBreakdown } from "../../contracts/run-types.js";
import type { Pattern, StepAction } from "../../patterns/pattern.js";
import type { CheckpointStore, RunStore } from "../../sessions/session-manager.js";
import type { ToolDecision } from "../decisions.js";
import type { RunDriver } from "../run-driver.js";
import type { ToolCallRecord } from "../run-state.js";
import { executeToolStage } from "../tool-stage.js";
import { type LoadedRunState, loadRunState } from "./load-run-state.js";

/** The model's answer that issued a step's calls. */
export interface AssistantAnswer {
  text: string;
  calls: ToolCall[];
}

/** How a resumed run goes on from its checkpoint. */
export type ResumePlan =
  /** The run's last step gave the final output; nothing is left but to finish. */
  | { kind: "finished"; output: unknown }
  /** The step in flight is finished by running the model's remaining calls, then the pattern goes on. */
  | { kind: "finish_step"; answer: AssistantAnswer; prior: ReadonlyMap<string, ToolCallRecord> }
  /** The pattern goes on from the last complete step. */
  | { kind: "continue" };

/**
 * Put a checkpoint's state back into a run's context and driver: transcript, usage, artifacts,
 * session state, memory view, prompt fragments, step count and stop-condition memory. Context assembly and
 * memory injection are not run again. Returns how the run goes on, and the transcript length the run
 * continues from (shorter than the checkpoint's when a step in flight is rewound or re-finished).
 */
export function restoreRun(
  loaded: LoadedRunState,
  driver: RunDriver,
  into: { pattern: Pattern; decisions?: readonly ToolDecision[] | undefined },
): { plan: ResumePlan; transcriptLength: number } {
  const { state } = loaded;
  const { ctx } = driver;
  const { pattern } = into;
  const decisions = into.decisions ?? NO_DECISIONS;
  const transcript = ctx.transcript as Message[];
  transcript.length = 0;
  for (const message of loaded.transcript) transcript.push(message);
  Object.assign(ctx.usage, state.usage, { costBreakdown: readCostBreakdown(state.usage.costBreakdown) });
  const artifacts = ctx.artifacts;
  artifacts.length = 0;
  for (const artifact of state.artifacts) artifacts.push(artifact);
  for (const key of Object.keys(ctx.state)) delete ctx.state[key];
  Object.assign(ctx.state, state.sessionState);
  ctx.memoryView = state.memoryView;
  if (state.systemPromptFragments.length > 0) {
    const fragments = ctx.systemPromptFragments;
    fragments.length = 0;
    for (const fragment of state.systemPromptFragments) fragments.push(fragment);
  }
  driver.restoreProgress(state);
  if (state.patternProgress !== undefined) pattern.restoreProgress?.(state.patternProgress);
  driver.pattern = pattern;
  const decided = decisions.length === 0 ? null : applyDecisions(state.toolCalls, decisions, driver);
  const plan = planResume(loaded, driver, decided);
  return { plan, transcriptLength: transcript.length };
}

/** How the run goes on from the restored state (the driver's pattern and transcript are already put back). */
function planResume(
  loaded: LoadedRunState,
  driver: RunDriver,
  decided: ReadonlyMap<string, ToolDecision> | null,
): ResumePlan {
  const { state } = loaded;
  const pattern = driver.pattern!;
  const transcript = driver.ctx.transcript as Message[];
  if (state.phase === "step_end") {
    if (state.final !== undefined && pattern.restoreProgress === undefined)
      return { kind: "finished", output: state.final.output };
    return { kind: "continue" };
  }
  // A step in flight: finish it from the model's answer when the pattern's steps are ReAct-shaped.
  const answer = pattern.resumesMidStep === false ? -1 : findAnswer(transcript, state.toolCalls);
  if (answer >= 0) {
    // Results the step had already appended are dropped: the records hold them, and the stage appends every
    // call's result again in the order the model issued them.
    transcript.length = answer + 1;
    const prior = new Map(
      state.toolCalls.map((record) => {
        const decision = decided?.get(record.id);
        return [record.id, decision === undefined ? record : { ...record, decision }];
      }),
    );
    const message = transcript[answer] as { content: string; toolCalls: ToolCall[] };
    return { kind: "finish_step", answer: { text: message.content, calls: message.toolCalls }, prior };
  }
  // Otherwise the step starts over from where it began; calls it made are not known to the model.
  transcript.length = Math.min(transcript.length, state.stepStartLength);
  driver.step = state.step - 1;
  return { kind: "continue" };
}

/**
 * Record the decisions for a suspended step: each is an event in the run's log; `always` makes it stick
 * for later calls of its tool — and for the other calls of that tool still waiting in this step. Returns the
 * decision for each call it reaches; the checkpoint's own records are not changed.
 */
function applyDecisions(
  calls: readonly ToolCallRecord[],
  decisions: readonly ToolDecision[],
  driver: RunDriver,
): Map<string, ToolDecision> {
  const decided = new Map<string, ToolDecision>();
  for (const decision of decisions) {
    const call = calls.find((candidate) => candidate.id === decision.toolCallId)!;
    decided.set(call.id, decision);
    if (decision.decisionId !== undefined) driver.decisionIds = [...driver.decisionIds, decision.decisionId];
    driver.log.emit("tool.decision", decidedPayload(call, decision));
    if (decision.always === undefined || decision.always === false || decision.action === "result") continue;
    driver.stick(call.toolId, decision.action, decision.always);
    for (const other of calls) {
      if (other.status !== "suspended" || other.toolId !== call.toolId || decided.has(other.id)) continue;
      if (decisions.some((candidate) => candidate.toolCallId === other.id)) continue;
      const sticky: ToolDecision = { toolCallId: other.id, action: decision.action, reason: "always" };
      decided.set(other.id, sticky);
      driver.log.emit("tool.decision", { ...decidedPayload(other, sticky), sticky: true });
    }
  }
  return decided;
}

/** What `tool.decision` says of a decision for a call. */
function decidedPayload(call: ToolCallRecord, decision: ToolDecision): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    toolCallId: call.id,
    toolId: call.toolId,
    action: decision.action,
  };
  if (decision.action === "result") payload.result = decision.value;
  if (decision.reason !== undefined) payload.reason = decision.reason;
  if (decision.decisionId !== undefined) payload.decisionId = decision.decisionId;
  if (decision.always !== undefined) payload.always = decision.always;
  return payload;
}

const NO_DECISIONS: readonly ToolDecision[] = Object.freeze([]);

/** The index of the assistant message that issued exactly the checkpoint's calls, or -1. */
function findAnswer(transcript: readonly Message[], calls: readonly ToolCallRecord[]): number {
  if (calls.length === 0) return -1;
  for (let index = transcript.length - 1; index >= 0; index--) {
    const message = transcript[index]!;
    if (message.role === "tool") continue;
    if (message.role !== "assistant" || message.toolCalls === undefined) return -1;
    if (message.toolCalls.length !== calls.length) return -1;
    return message.toolCalls.every((call, position) => call.id === calls[position]!.id) ? index : -1;
  }
  return -1;
}

/**
 * Continue a run from a loaded checkpoint in a driver whose context is made: the pattern is set up on it, the
 * checkpoint's state is put back (with the decisions for its suspended step), and what the store holds of the
 * run's transcript is rewound to where the run goes on. Returns how the run goes on.
 */
export async function resumeInDriver(options: {
  driver: RunDriver;
  loaded: LoadedRunState;
  pattern: Pattern;
  decisions?: readonly ToolDecision[] | undefined;
}): Promise<ResumePlan> {
  const { driver, loaded, pattern } = options;
  await pattern.setup(driver.ctx, driver);
  const restored = restoreRun(loaded, driver, { pattern, decisions: options.decisions });
  driver.checkpoints!.rewind(restored.transcriptLength);
  return restored.plan;
}

/**
 * Rebuild a durable run from its checkpoint after a retryable error: the checkpoint is read again (it must fit the
 * agent's shape), and a new pattern continues from it. Returns the pattern and how the run goes on.
 */
export async function reloadCheckpoint(options: {
  driver: RunDriver;
  store: CheckpointStore & RunStore;
  checkpointId: string;
}): Promise<{ pattern: Pattern; plan: ResumePlan }> {
  const { driver, store, checkpointId } = options;
  const loaded = await loadRunState(store, checkpointId, { fingerprint: driver.agent.fingerprint });
  const pattern = driver.agent.createPattern();
  const plan = await resumeInDriver({ driver, loaded, pattern });
  return { pattern, plan };
}

/** Finish the step a checkpoint caught in flight: the model's remaining calls, then StepEnd. */
export async function finishInterruptedStep(
  driver: RunDriver,
  answer: AssistantAnswer,
  prior: ReadonlyMap<string, ToolCallRecord>,
): Promise<void> {
  driver.resumeStep(answer);
  try {
    await executeToolStage(driver, answer.calls, { appendResults: true, prior });
  } catch (error) {
    await driver.abortStep(error);
    throw error;
  }
  const completed = driver.completeStep(CONTINUE);
  if (completed !== undefined) await completed;
}

const CONTINUE: StepAction = Object.freeze({ type: "continue" }) as StepAction;

/** A checkpoint's cost breakdown; checkpoints written before the keys were camelCase say `cached_read`. */
function readCostBreakdown(stored: CostBreakdown): CostBreakdown {
  const older = stored as Partial<CostBreakdown> & { cached_read?: number; cached_write?: number };
  return {
    input: older.input ?? 0,
    output: older.output ?? 0,
    cachedRead: older.cachedRead ?? older.cached_read ?? 0,
    cachedWrite: older.cachedWrite ?? older.cached_write ?? 0,
  };
}
