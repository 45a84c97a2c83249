import type { ResumeMode, RunArtifact, RunStatus, RunUsage, ToolCallStatus } from "../contracts/run-types.js";
import type { JobHandle } from "../contracts/tool.js";
import type { StickyAction, ToolDecision } from "../contracts/tool-decision.js";
import type { RunTraceContext } from "../events/trace-context-carrier.js";

/** The version of {@link RunState}; a checkpoint of another version is refused, never half-read. */
export const RUN_STATE_SCHEMA_VERSION = 1;

/**
 * Where in its loop a checkpoint caught the run:
 * - `step_end`: step `step` is complete (`final` holds its output when it was the last one);
 * - `tools`: step `step` is in flight — the model's answer is in the transcript and `toolCalls` says which of
 *   its calls are done (`succeeded`, `failed`, `cancelled`), started (`running`) or still to run (`new`);
 * - `suspended`: step `step` stopped for decisions on its `suspended` calls.
 */
export type CheckpointPhase = "step_end" | "tools" | "suspended";

/** A tool call as a checkpoint records it. */
export interface ToolCallRecord {
  id: string;
  toolId: string;
  params: Record<string, unknown>;
  status: ToolCallStatus;
  result?: unknown;
  error?: { code: string; message: string; hint?: string };
  suspension?: { reason?: string; resumeMode: ResumeMode; responseSchema?: Record<string, unknown> };
  /** The decision a resumed run applies to this suspended call. */
  decision?: ToolDecision;
  /** The background job a running call submitted: a resume polls it rather than submitting another. */
  job?: JobHandle;
}

/** What the stop conditions remember between steps. */
export interface StopConditionMemory {
  consecutiveErrors: number;
  signatures: string[];
}

/**
 * A run's whole state as one serialisable value (ARCHITECTURE "Run state and checkpoints"). The transcript is
 * not in it: a checkpoint holds `transcriptLength`, and the run's messages live in the store's run transcript
 * (`saveRunMessages`), appended step by step rather than re-serialised at every checkpoint.
 */
export interface RunState {
  schemaVersion: number;
  runId: string;
  sessionId: string;
  agentId: string;
  /** The agent's tools, pattern and model when the checkpoint was written. */
  fingerprint: string;
  status: RunStatus;
  /** Whether the run was durable (a resumed run stays so unless its request says otherwise). */
  durable: boolean;
  phase: CheckpointPhase;
  /** Steps begun so far (the step in flight for `tools` and `suspended`). */
  step: number;
  /** Messages of the run transcript this state covers. */
  transcriptLength: number;
  /** Where the run's own messages start (what it adds to the session when it finishes). */
  firstNewMessage: number;
  /** Transcript length when the step in flight began: where a pattern that cannot resume mid-step restarts. */
  stepStartLength: number;
  inputText: string;
  /** The calls of the step in flight (`tools`, `suspended`); empty at `step_end`. */
  toolCalls: ToolCallRecord[];
  /** Present when the step that ended was the run's last (`step_end`). */
  final?: { output: unknown };
  usage: RunUsage;
  artifacts: RunArtifact[];
  /** The session's persisted state keys as the run left them. */
  sessionState: Record<string, unknown>;
  memoryView: Record<string, unknown>;
  systemPromptFragments: string[];
  /** What the pattern asked to keep (`Pattern.saveProgress`). */
  patternProgress?: unknown;
  stopConditions: StopConditionMemory;
  /** Ids of the decisions already applied (a repeated `decisionId` is a no-op). */
  decisionIds?: string[];
  /** Decisions that stick for later calls of a tool in this run (`always: true`). */
  sticky?: Record<string, StickyAction>;
  /** Tools already warned about as not idempotent (`run.durable_idempotency_warning` is once per run and tool). */
  idempotencyWarned: string[];
  /** The last event sequence written before this checkpoint. */
  lastSequence: number;
  /** When the run first started (ms since epoch); duration limits count from here. */
  startedAtMs: number;
  /** The trace the run's spans belong to, when a tracing event bus followed it; a resume joins that trace. */
  traceContext?: RunTraceContext;
}

/** The id of a run's `n`th checkpoint. */
export function checkpointIdOf(runId: string, n: number): string {
  return `${runId}:step:${n}`;
}

/** The run id and counter of a checkpoint id, or null for an id Keel did not make. */
export function parseCheckpointId(checkpointId: string): { runId: string; n: number } | null {
  const match = /^(.+):step:(\d+)$/.exec(checkpointId);
  return match === null ? null : { runId: match[1]!, n: Number(match[2]) };
}
