/** A human's (or a host's) decision on one suspended tool call, keyed by the call's id. */
export interface ToolDecision {
  toolCallId: string;
  /** approve: resume the call in its resume mode · result: `value` is its result · deny: cancel it. */
  action: "approve" | "deny" | "result";
  value?: unknown;
  reason?: string;
  /** Apply the same action to later calls of this tool in the run (`true`), or in the whole session. */
  always?: boolean | "session";
  /** An idempotency key: a decision whose id was already applied is a no-op. */
  decisionId?: string;
}

/** What a sticky decision repeats for later calls of the same tool. */
export type StickyAction = "approve" | "deny";
