import type { RunStatus, ToolCallStatus } from "../contracts/run-types.js";
import { IllegalTransitionError } from "../errors/error-classes.js";

const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  created: ["running", "done"],
  running: ["waiting", "done"],
  waiting: ["running", "done"],
  done: [],
};

/** Whether a run may go from `from` to `to`; staying put is always allowed. */
export function canTransitionRun(from: RunStatus, to: RunStatus): boolean {
  return from === to || RUN_TRANSITIONS[from].includes(to);
}

/** The run status after a transition; an illegal one throws `IllegalTransitionError`. */
export function transitionRun(from: RunStatus, to: RunStatus): RunStatus {
  if (!canTransitionRun(from, to)) {
    throw new IllegalTransitionError(`A run cannot go from "${from}" to "${to}"`, {
      hint: `Allowed from "${from}": ${RUN_TRANSITIONS[from].join(", ") || "nothing (done is final)"}`,
    });
  }
  return to;
}

const TOOL_CALL_TRANSITIONS: Readonly<Record<ToolCallStatus, readonly ToolCallStatus[]>> = {
  new: ["running", "suspended", "succeeded", "failed", "cancelled"],
  running: ["succeeded", "failed", "cancelled", "suspended"],
  suspended: ["resuming", "cancelled"],
  resuming: ["running", "suspended", "succeeded", "failed", "cancelled"],
  succeeded: [],
  failed: [],
  cancelled: [],
};

export function isTerminalToolCallStatus(status: ToolCallStatus): boolean {
  return status === "succeeded" || status === "failed" || status === "cancelled";
}

/** Whether a tool call may go from `from` to `to`; staying put is always allowed. */
export function canTransitionToolCall(from: ToolCallStatus, to: ToolCallStatus): boolean {
  return from === to || TOOL_CALL_TRANSITIONS[from].includes(to);
}

/** The tool-call status after a transition; an illegal one throws `IllegalTransitionError`. */
export function transitionToolCall(from: ToolCallStatus, to: ToolCallStatus): ToolCallStatus {
  if (!canTransitionToolCall(from, to)) {
    throw new IllegalTransitionError(`A tool call cannot go from "${from}" to "${to}"`, {
      hint: `Allowed from "${from}": ${TOOL_CALL_TRANSITIONS[from].join(", ") || "nothing (terminal)"}`,
    });
  }
  return to;
}

export type ToolPhaseSummary = "running" | "waiting" | "settled";

/**
 * The step's tool phase from its calls: any running or resuming call keeps it running; otherwise any
 * suspended call makes the run wait; otherwise the step goes on to StepEnd.
 */
export function summarizeToolPhase(statuses: Iterable<ToolCallStatus>): ToolPhaseSummary {
  let suspended = false;
  for (const status of statuses) {
    if (status === "running" || status === "resuming" || status === "new") return "running";
    if (status === "suspended") suspended = true;
  }
  return suspended ? "waiting" : "settled";
}
