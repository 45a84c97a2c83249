import type { ToolCallState } from "../contracts/hook.js";
import type { RunArtifact, RunUsage } from "../contracts/run-types.js";
import type { RunContext } from "../contracts/tool.js";
import { hasLazyContainers } from "./create-run-context.js";
import type { StickyAction, ToolDecision } from "./decisions.js";
import {
  type CheckpointPhase,
  RUN_STATE_SCHEMA_VERSION,
  type RunState,
  type StopConditionMemory,
  type ToolCallRecord,
} from "./run-state.js";

/** What the driver knows of a run beyond its context. */
export interface RunProgress {
  readonly fingerprint: string;
  readonly durable: boolean;
  readonly step: number;
  readonly firstNewMessage: number;
  readonly stepStartLength: number;
  readonly inFlight: readonly ToolCallState[];
  readonly stopConditions: StopConditionMemory;
  readonly idempotencyWarned: ReadonlySet<string>;
  readonly startedAtMs: number;
  readonly patternProgress: unknown;
  readonly decisionIds: readonly string[];
  readonly sticky: ReadonlyMap<string, StickyAction> | null;
}

/**
 * A snapshot of the run as a {@link RunState}: later changes to the run never reach it, so a store may keep
 * it by reference. Everything but the transcript is copied; the transcript is stored by appending.
 */
export function captureRunState(
  progress: RunProgress & { readonly ctx: RunContext },
  phase: CheckpointPhase,
  final?: { output: unknown },
): RunState {
  const { ctx } = progress;
  const state: RunState = {
    schemaVersion: RUN_STATE_SCHEMA_VERSION,
    runId: ctx.runId,
    sessionId: ctx.sessionId,
    agentId: ctx.agentId,
    fingerprint: progress.fingerprint,
    status: phase === "suspended" ? "waiting" : "running",
    durable: progress.durable,
    phase,
    step: progress.step,
    transcriptLength: ctx.transcript.length,
    firstNewMessage: progress.firstNewMessage,
    stepStartLength: progress.stepStartLength,
    inputText: ctx.inputText,
    toolCalls: phase === "step_end" ? [] : progress.inFlight.map(toRecord),
    usage: copyUsage(ctx.usage),
    artifacts: copyArtifacts(ctx),
    sessionState: copyRecord(ctx.state),
    memoryView: copyRecord(ctx.memoryView),
    systemPromptFragments:
      hasLazyContainers(ctx) && !ctx.hasSystemPromptFragments ? [] : ctx.systemPromptFragments.slice(),
    stopConditions: {
      consecutiveErrors: progress.stopConditions.consecutiveErrors,
      signatures: progress.stopConditions.signatures.slice(),
    },
    idempotencyWarned: [...progress.idempotencyWarned],
    lastSequence: 0,
    startedAtMs: progress.startedAtMs,
  };
  if (final !== undefined) state.final = { output: final.output };
  if (progress.decisionIds.length > 0) state.decisionIds = progress.decisionIds.slice();
  if (progress.sticky !== null && progress.sticky.size > 0)
    state.sticky = Object.fromEntries(progress.sticky);
  if (progress.patternProgress !== undefined)
    state.patternProgress = structuredClone(progress.patternProgress);
  return state;
}

function toRecord(call: ToolCallState): ToolCallRecord {
  const record: ToolCallRecord = {
    id: call.id,
    toolId: call.toolId,
    params: call.params,
    status: call.status,
  };
  if (call.result !== undefined) record.result = call.result;
  if (call.error !== undefined) record.error = { ...call.error };
  if (call.suspension !== undefined) record.suspension = { ...call.suspension };
  if (call.job !== undefined) record.job = { ...call.job };
  // A decided call not yet finished keeps its decision, so a resume after a crash replays it rather than asking.
  if (
    (call.status === "new" || call.status === "resuming" || call.status === "running") &&
    call.resumeInput !== undefined
  )
    record.decision = call.resumeInput as ToolDecision;
  return record;
}

function copyUsage(usage: RunUsage): RunUsage {
  return { ...usage, costBreakdown: { ...usage.costBreakdown } };
}

function copyArtifacts(ctx: RunContext): RunArtifact[] {
  const artifacts = ctx.artifacts;
  return artifacts.length === 0 ? [] : artifacts.map((artifact) => ({ ...artifact }));
}

/** A deep copy, skipped for the common empty record. */
function copyRecord(record: Record<string, unknown>): Record<string, unknown> {
  for (const _ in record) return structuredClone(record);
  return {};
}
