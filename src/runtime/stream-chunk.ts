import type { RunResult } from "../contracts/run-types.js";
import type { RuntimeEvent } from "../contracts/runtime-event.js";

/** The chunk kinds of `stream()`; every other event name in `EVENT_SCHEMAS` also appears as itself. */
export const RunStreamChunkKind = {
  RUN_STARTED: "run.started",
  STEP_STARTED: "step.started",
  LLM_DELTA: "llm.delta",
  LLM_FINISHED: "llm.finished",
  TOOL_STARTED: "tool.started",
  TOOL_DELTA: "tool.delta",
  TOOL_FINISHED: "tool.finished",
  TOOL_SUSPENDED: "tool.suspended",
  TOOL_DECISION: "tool.decision",
  ARTIFACT: "artifact",
  VALIDATION_RETRY: "validation.retry",
  STEP_FINISHED: "step.finished",
  RUN_FINISHED: "run.finished",
} as const;

export type RunStreamChunkKind = (typeof RunStreamChunkKind)[keyof typeof RunStreamChunkKind];

/** One chunk of a run's stream: an event of the run's log, with its sequence. */
export interface RunStreamChunk {
  readonly kind: string;
  readonly runId: string;
  readonly sessionId: string;
  readonly agentId: string;
  readonly sequence: number;
  readonly timestampMs: number;
  readonly payload: Record<string, unknown>;
  /** Only on `run.finished`. */
  readonly result?: RunResult | undefined;
}

/**
 * The stream's view of an event: `tool.completed` and `tool.failed` show as `tool.finished`; every
 * other event is its own chunk, the same object.
 */
export function toStreamChunk(event: RuntimeEvent): RunStreamChunk {
  if (event.kind === "tool.completed" || event.kind === "tool.failed") {
    const payload: Record<string, unknown> = { ...event.payload };
    if (event.kind === "tool.failed") payload.ok = false;
    return {
      kind: RunStreamChunkKind.TOOL_FINISHED,
      runId: event.runId,
      sessionId: event.sessionId,
      agentId: event.agentId,
      sequence: event.sequence,
      timestampMs: event.timestampMs,
      payload,
    };
  }
  return event;
}

/** Whether a chunk of this kind passes a `kinds` filter (which names stream kinds). */
export function chunkKindOf(eventKind: string): string {
  return eventKind === "tool.completed" || eventKind === "tool.failed"
    ? RunStreamChunkKind.TOOL_FINISHED
    : eventKind;
}
