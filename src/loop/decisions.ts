import type { StickyAction, ToolDecision } from "../contracts/tool-decision.js";
import { DecisionError } from "../errors/error-classes.js";
import type { ToolCallRecord } from "./run-state.js";

export type { StickyAction, ToolDecision };

/** Where session-wide sticky decisions live in the session's state. */
export const SESSION_STICKY_KEY = "keel:stickyDecisions";

/** The decision that sticks for a tool across the session's runs (`always: "session"`), if any. */
export function sessionStickyDecision(
  state: Record<string, unknown>,
  toolId: string,
): StickyAction | undefined {
  return (state[SESSION_STICKY_KEY] as Record<string, StickyAction> | undefined)?.[toolId];
}

/** Make a decision stick for the tool in the session's state, for this run and the session's next ones. */
export function stickToSession(state: Record<string, unknown>, toolId: string, action: StickyAction): void {
  const session = (state[SESSION_STICKY_KEY] ?? {}) as Record<string, StickyAction>;
  state[SESSION_STICKY_KEY] = { ...session, [toolId]: action };
}

const ACTIONS: ReadonlySet<string> = new Set(["approve", "deny", "result"]);

/**
 * Check a batch of decisions against the calls a suspended checkpoint holds. All or nothing: one bad decision
 * refuses the batch with a `DecisionError` naming what to do, and nothing is applied. Returns the decisions to
 * apply — those whose `decisionId` was applied before are dropped as no-ops.
 */
export function checkDecisions(
  suspended: {
    runId: string;
    toolCalls: readonly ToolCallRecord[];
    decisionIds?: readonly string[] | undefined;
  },
  decisions: readonly ToolDecision[],
): ToolDecision[] {
  const { runId, toolCalls: calls } = suspended;
  const appliedIds = suspended.decisionIds ?? [];
  if (!Array.isArray(decisions) || decisions.length === 0) {
    throw new DecisionError(`No decisions given for run '${runId}'`, {
      hint: "Pass decisions: [{ toolCallId, action: 'approve' | 'deny' | 'result' }]",
    });
  }
  const applied = new Set(appliedIds);
  const pending = calls.filter((call) => call.status === "suspended");
  const seen = new Set<string>();
  const fresh: ToolDecision[] = [];
  for (const decision of decisions) {
    if (decision.decisionId !== undefined && applied.has(decision.decisionId)) continue;
    if (!ACTIONS.has(decision.action)) {
      throw new DecisionError(`Unknown decision action '${String(decision.action)}'`, {
        hint: "action is one of 'approve', 'deny', 'result'",
        context: { runId },
      });
    }
    const call = calls.find((candidate) => candidate.id === decision.toolCallId);
    if (call === undefined) {
      throw new DecisionError(`Run '${runId}' has no suspended call '${decision.toolCallId}'`, {
        hint: `Calls waiting for a decision: ${pending.map((p) => `${p.id} (${p.toolId})`).join(", ") || "none"}`,
        context: { runId },
      });
    }
    if (call.status !== "suspended" || seen.has(call.id)) {
      throw new DecisionError(`Call '${call.id}' of run '${runId}' was already decided`, {
        hint: `Calls still waiting: ${pending.map((p) => p.id).join(", ") || "none"}`,
        context: { runId },
      });
    }
    if (decision.action === "result" && decision.value === undefined) {
      throw new DecisionError(`A 'result' decision for call '${call.id}' needs a value`, {
        hint: "Give the tool result the model should see: `--value JSON` (`value` in code)",
        context: { runId },
      });
    }
    seen.add(call.id);
    fresh.push(decision);
  }
  return fresh;
}

/** The decision an approval already carries, if `resumeInput` is one. */
export function isApproval(resumeInput: unknown): boolean {
  return (resumeInput as ToolDecision | undefined)?.action === "approve";
}
