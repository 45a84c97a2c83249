import type { ResumeMode, SuspendedToolCall } from "../../contracts/run-types.js";
import type { ToolDecision } from "../../contracts/tool-decision.js";
import { AgUiInputError } from "./ag-ui-input-error.js";
import type { AgUiInterrupt, AgUiResumeEntry } from "./ag-ui-types.js";

/**
 * An interrupt's id names the waiting Keel run and the suspended call, so a resume finds both from the ids alone —
 * after a server restart too, with no table to keep. Both parts are URI-encoded so the separator is unambiguous.
 */
export function interruptId(runId: string, toolCallId: string): string {
  return `${encodeURIComponent(runId)}:${encodeURIComponent(toolCallId)}`;
}

/** The run and call an interrupt id names, or undefined for an id Keel did not make. */
export function parseInterruptId(id: string): { runId: string; toolCallId: string } | undefined {
  const parts = id.split(":");
  if (parts.length !== 2 || parts[0] === "" || parts[1] === "") return undefined;
  try {
    return { runId: decodeURIComponent(parts[0]!), toolCallId: decodeURIComponent(parts[1]!) };
  } catch {
    return undefined;
  }
}

/**
 * The interrupt a suspended tool call becomes: what the client must answer, and the JSON Schema of an answer. A
 * call waiting for approval is answered yes or no; one that asks the person for a value (a tool that suspended
 * itself) is answered with the value, so its schema is the value's.
 */
export function toInterrupt(runId: string, call: SuspendedToolCall): AgUiInterrupt {
  const approval = !asksForValue(call.resumeMode);
  return {
    id: interruptId(runId, call.toolCallId),
    reason: approval ? "tool_approval" : "tool_input",
    ...(call.reason === undefined ? {} : { message: call.reason }),
    toolCallId: call.toolCallId,
    responseSchema: approval
      ? {
          type: "object",
          properties: { approved: { type: "boolean" }, reason: { type: "string" }, result: {} },
        }
      : (call.responseSchema ?? {}),
    metadata: { keel: { runId, toolId: call.toolId, params: call.params, resumeMode: call.resumeMode } },
  };
}

/** Whether a call in this mode waits for a value from the person rather than for a yes or no. */
function asksForValue(mode: ResumeMode | undefined): boolean {
  return mode !== undefined && mode !== "replay_tool_call";
}

const PAYLOAD_HINT =
  "Answer each interrupt with status 'cancelled' (deny), or 'resolved' and a payload: absent or true (approve), " +
  "false (deny), { approved: true, value? } (approve, value as the call's answer), { approved: false, reason? } " +
  "(deny), or { result } (the call's result); a tool_input interrupt also takes the answer itself as the payload";

/**
 * The decision one resume entry makes about its call. A call that asks for a value takes any payload but the
 * shapes that approve, deny or give a result as that value: the answer `true` to a yes-or-no question is the
 * value `true`, not an approval without one.
 */
function toDecision(entry: AgUiResumeEntry, toolCallId: string, mode: ResumeMode | undefined): ToolDecision {
  if (entry.status === "cancelled") {
    return { toolCallId, action: "deny", reason: reasonOf(entry.payload) ?? "cancelled by the client" };
  }
  const payload = entry.payload;
  const valueAnswer = asksForValue(mode);
  if (payload === undefined) return { toolCallId, action: "approve" };
  if (!valueAnswer && payload === true) return { toolCallId, action: "approve" };
  if (!valueAnswer && payload === false) return { toolCallId, action: "deny" };
  if (typeof payload === "object" && payload !== null && !Array.isArray(payload)) {
    const answer = payload as Record<string, unknown>;
    if (answer.approved === false) return withReason({ toolCallId, action: "deny" }, answer.reason);
    if (answer.approved === true) {
      const decision: ToolDecision = { toolCallId, action: "approve" };
      if (answer.value !== undefined) decision.value = answer.value;
      return withReason(decision, answer.reason);
    }
    if ("result" in answer) return { toolCallId, action: "result", value: answer.result };
  }
  if (valueAnswer) return { toolCallId, action: "approve", value: payload };
  throw new AgUiInputError(`Resume entry '${entry.interruptId}' has a payload Keel cannot read`, {
    hint: PAYLOAD_HINT,
  });
}

function reasonOf(payload: unknown): string | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const reason = (payload as Record<string, unknown>).reason;
  return typeof reason === "string" ? reason : undefined;
}

function withReason(decision: ToolDecision, reason: unknown): ToolDecision {
  if (typeof reason === "string") decision.reason = reason;
  return decision;
}

/**
 * The waiting run a resume answers. Every entry must name a call of one run: an AG-UI run resumes one paused
 * run, and the client sends an answer for each of its interrupts.
 */
export function resumedRunId(entries: readonly AgUiResumeEntry[]): string {
  let runId: string | undefined;
  for (const entry of entries) {
    const target = parseInterruptId(entry.interruptId);
    if (target === undefined) {
      throw new AgUiInputError(`Resume entry names an interrupt Keel did not issue: '${entry.interruptId}'`, {
        hint: "Answer the interrupts of the last RUN_FINISHED with their ids unchanged",
      });
    }
    if (runId !== undefined && runId !== target.runId) {
      throw new AgUiInputError("Resume entries answer interrupts of different runs", {
        hint: "Resume one paused run at a time: answer the interrupts of the last RUN_FINISHED",
      });
    }
    runId = target.runId;
  }
  if (runId === undefined) {
    throw new AgUiInputError("The resume has no entries", {
      hint: "Send resume with one entry per interrupt of the last RUN_FINISHED, or omit it to start a new run",
    });
  }
  return runId;
}

/**
 * The waiting run a resume answers and its decisions. `pending` are the run's suspended calls, when known: how
 * each waits (for a yes or no, or for a value) decides how its payload is read.
 */
export function resumeToDecisions(
  entries: readonly AgUiResumeEntry[],
  pending: readonly SuspendedToolCall[] = [],
): { runId: string; decisions: ToolDecision[] } {
  const runId = resumedRunId(entries);
  const modes = new Map(pending.map((call) => [call.toolCallId, call.resumeMode]));
  const decisions = entries.map((entry) => {
    const { toolCallId } = parseInterruptId(entry.interruptId)!;
    return toDecision(entry, toolCallId, modes.get(toolCallId));
  });
  return { runId, decisions };
}
