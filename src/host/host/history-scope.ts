import type { RunSession } from "./run-session.js";

/**
 * Where a run's history and event reads go, and whether its grant reaches there. A conversation is read whole or
 * one thread of it; a run started in a thread reads that thread of its own conversation unless its grant says
 * the whole conversation (`historyThread` null), so a busy channel's other threads stay out of its context.
 */

/** A history read's target: the conversation (null: the run has none) and, when one thread only, that thread. */
export interface HistoryTarget {
  conversationId: string | null;
  threadId?: string;
}

/**
 * The target a request names: `conversation_id` (the run's own when absent) and `thread_id` — a thread id, or
 * null for the whole conversation. Absent, the run's own conversation is read in the run's thread when its grant
 * keeps it to one, and any other conversation whole.
 */
export function historyTargetOf(
  request: { conversation_id?: unknown; thread_id?: unknown },
  session: RunSession,
): HistoryTarget {
  const own = session.event.conversation_id ?? null;
  const conversationId = typeof request.conversation_id === "string" ? request.conversation_id : own;
  let threadId: string | undefined;
  if (typeof request.thread_id === "string") threadId = request.thread_id;
  else if (request.thread_id === undefined && conversationId === own)
    threadId = session.grant.historyThread ?? undefined;
  return threadId === undefined ? { conversationId } : { conversationId, threadId };
}

/** Whether the run's grant covers a target, and the resource name the audit records for it. */
export function historyGrantOf(
  target: HistoryTarget,
  session: RunSession,
): { name: string; granted: boolean } {
  const { conversationId, threadId } = target;
  const name = `conversation:${conversationId ?? ""}${threadId === undefined ? "" : `/thread:${threadId}`}`;
  if (conversationId === null) return { name, granted: true };
  return { name, granted: inGrant({ conversation_id: conversationId, thread_id: threadId }, session) };
}

/**
 * Whether an event or artifact record is visible to the run: one it made itself, or one of a granted
 * conversation — of the run's own conversation, only its thread when the grant keeps it to one.
 */
export function visibleToRun(
  record: { run_id?: string | null; conversation_id?: string | null; thread_id?: string | null },
  session: RunSession,
): boolean {
  return record.run_id === session.runId || inGrant(record, session);
}

function inGrant(
  record: { conversation_id?: string | null; thread_id?: string | null },
  session: RunSession,
): boolean {
  const { conversations, historyThread } = session.grant;
  const conversationId = record.conversation_id;
  if (conversationId == null || !conversations.has(conversationId)) return false;
  return (
    conversationId !== session.event.conversation_id ||
    historyThread === null ||
    record.thread_id === historyThread
  );
}
