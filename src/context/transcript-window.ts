import { type Message, messageText } from "../contracts/message.js";
import type { SessionArtifact } from "../sessions/session-manager.js";

/**
 * The approximate tokens of one message: its text plus, for an assistant, the names and arguments of its tool
 * calls, which the provider sends too and which can dwarf the text.
 */
export function messageTokens(message: Message, countTokens: (text: string) => number): number {
  let tokens = countTokens(messageText(message));
  if (message.role === "assistant" && message.toolCalls) {
    for (const call of message.toolCalls) {
      tokens += countTokens(call.name + (call.rawArguments ?? JSON.stringify(call.arguments)));
    }
  }
  return tokens;
}

/** Where a kept window of newest messages starts, and what it costs. */
export interface NewestWindow {
  start: number;
  keptTokens: number;
}

/**
 * The newest messages of `messages[from..]` within `maxMessages` and `maxTokens` (either may be null for no
 * bound). The window is contiguous: it stops at the first message that does not fit, so no gap opens in the
 * middle of a conversation.
 */
export function newestWindow(
  messages: readonly Message[],
  tokensOf: (message: Message) => number,
  limits: { maxMessages: number | null; maxTokens: number | null; from?: number },
): NewestWindow {
  const from = limits.from ?? 0;
  let start = messages.length;
  let keptTokens = 0;
  while (start > from) {
    if (limits.maxMessages !== null && messages.length - start >= limits.maxMessages) break;
    const tokens = limits.maxTokens === null ? 0 : tokensOf(messages[start - 1]!);
    if (limits.maxTokens !== null && keptTokens + tokens > limits.maxTokens) break;
    keptTokens += tokens;
    start--;
  }
  return { start, keptTokens };
}

/**
 * Drop tool messages whose assistant tool call is not in `kept`: providers refuse a tool result that answers
 * no call, so a window that cut an assistant message off must lose its results too.
 */
export function dropOrphanToolMessages(kept: Message[]): Message[] {
  if (!kept.some((message) => message.role === "tool")) return kept;
  const callIds = new Set<string>();
  for (const message of kept) {
    if (message.role === "assistant") for (const call of message.toolCalls ?? []) callIds.add(call.id);
  }
  return kept.filter((message) => message.role !== "tool" || callIds.has(message.toolCallId));
}

/** The newest `maxArtifacts` artifacts and how many older ones were left out. */
export function newestArtifacts(
  artifacts: SessionArtifact[],
  maxArtifacts: number,
): { sessionArtifacts: SessionArtifact[]; omittedArtifacts: number } {
  const omittedArtifacts = Math.max(0, artifacts.length - maxArtifacts);
  return {
    sessionArtifacts: omittedArtifacts === 0 ? artifacts : artifacts.slice(omittedArtifacts),
    omittedArtifacts,
  };
}

/** The system message that tells the model older messages were left out. */
export function omissionSummaryMessage(omitted: number): Message {
  return { role: "system", content: `Summary: omitted ${omitted} older message(s)` };
}

/** The summed tokens of `messages`. */
export function totalTokens(messages: readonly Message[], tokensOf: (message: Message) => number): number {
  let total = 0;
  for (const message of messages) total += tokensOf(message);
  return total;
}
