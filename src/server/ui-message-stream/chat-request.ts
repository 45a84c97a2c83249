import { z } from "zod";
import type { ToolDecision } from "../../contracts/tool-decision.js";
import { runIdOfApproval } from "./ui-message-translator.js";

/** An id the client made: a chat or message id. Bounded, so a huge one is refused rather than stored. */
const clientId = z.string().min(1).max(256);

const partSchema = z.looseObject({ type: z.string() });
const messageSchema = z.looseObject({
  id: z.string().optional(),
  role: z.string(),
  parts: z.array(partSchema),
});

/** What `DefaultChatTransport` POSTs: the chat id, its messages, and why it sends them. */
const chatRequestSchema = z.looseObject({
  id: clientId,
  messages: z.array(messageSchema).min(1),
  trigger: z.string().optional(),
  messageId: z.string().optional(),
});

export type ChatRequestBody = z.infer<typeof chatRequestSchema>;
type UiPart = z.infer<typeof partSchema>;

/** A request the app refuses, with the status to answer and a hint for whoever wrote the client. */
export class ChatRequestError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 404 | 409,
    readonly hint: string,
  ) {
    super(message);
    this.name = "ChatRequestError";
  }
}

/** The body parsed, or a 400 naming the first thing wrong with it. */
export function parseChatRequest(body: unknown): ChatRequestBody {
  const parsed = chatRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "body" : issue.path.join(".");
  throw new ChatRequestError(
    `Invalid chat request: ${where}: ${issue?.message ?? "invalid"}`,
    400,
    HINT_BODY,
  );
}

const HINT_BODY =
  "POST the body the AI SDK's DefaultChatTransport sends: { id: chatId, messages: UIMessage[], trigger, messageId? }";

/** The text of the last message when it is the user's: the new run's input. */
export function lastUserText(request: ChatRequestBody): string | undefined {
  const last = request.messages[request.messages.length - 1];
  if (last?.role !== "user") return undefined;
  const texts = last.parts.flatMap((part) =>
    part.type === "text" && typeof part.text === "string" ? [part.text] : [],
  );
  return texts.length === 0 ? undefined : texts.join("\n");
}

/** A tool part of a UI message: `tool-<name>`, or `dynamic-tool` for a tool the client has no type for. */
function isToolPart(part: UiPart): boolean {
  return part.type.startsWith("tool-") || part.type === "dynamic-tool";
}

/** The decisions one run's approval answers make. */
export interface ApprovalAnswers {
  runId: string;
  decisions: ToolDecision[];
}

/**
 * The approvals the user answered in the last assistant message (`addToolApprovalResponse` puts the part in state
 * `approval-responded` with `approval: { id, approved, reason? }`), grouped by the run each approval id names.
 * Answers to approvals Keel did not issue are not Keel's to decide, and are left out.
 */
export function approvalAnswers(request: ChatRequestBody): ApprovalAnswers[] {
  const last = request.messages[request.messages.length - 1];
  if (last?.role !== "assistant") return [];
  const byRun = new Map<string, ToolDecision[]>();
  for (const part of last.parts) {
    if (!isToolPart(part) || part.state !== "approval-responded") continue;
    const approval = part.approval as { id?: unknown; approved?: unknown; reason?: unknown } | undefined;
    if (typeof approval?.id !== "string" || typeof approval.approved !== "boolean") continue;
    if (typeof part.toolCallId !== "string") continue;
    const runId = runIdOfApproval(approval.id);
    if (runId === undefined) continue;
    const decision: ToolDecision = {
      toolCallId: part.toolCallId,
      action: approval.approved ? "approve" : "deny",
      // The approval id as the decision's key: a POST the client sends twice decides once.
      decisionId: approval.id,
      ...(typeof approval.reason === "string" ? { reason: approval.reason } : {}),
    };
    byRun.set(runId, [...(byRun.get(runId) ?? []), decision]);
  }
  return [...byRun].map(([runId, decisions]) => ({ runId, decisions }));
}

/**
 * Answers to calls of a waiting run given as tool outputs, the way an AI SDK 5 client answers (it has no approval
 * parts: `addToolResult` puts the part in `output-available` or `output-error`). An output `{ approved: boolean,
 * reason? }` approves or denies the call; any other output is the call's result; an error denies it.
 */
export function toolOutputAnswers(request: ChatRequestBody, pending: ReadonlySet<string>): ToolDecision[] {
  const last = request.messages[request.messages.length - 1];
  if (last?.role !== "assistant") return [];
  const decisions: ToolDecision[] = [];
  for (const part of last.parts) {
    if (!isToolPart(part) || typeof part.toolCallId !== "string" || !pending.has(part.toolCallId)) continue;
    const toolCallId = part.toolCallId;
    if (part.state === "output-error") {
      const reason = typeof part.errorText === "string" ? part.errorText : undefined;
      decisions.push({ toolCallId, action: "deny", ...(reason === undefined ? {} : { reason }) });
    } else if (part.state === "output-available") {
      decisions.push(decisionOfOutput(toolCallId, part.output));
    }
  }
  return decisions;
}

function decisionOfOutput(toolCallId: string, output: unknown): ToolDecision {
  if (
    typeof output === "object" &&
    output !== null &&
    typeof (output as { approved?: unknown }).approved === "boolean"
  ) {
    const { approved, reason } = output as { approved: boolean; reason?: unknown };
    return {
      toolCallId,
      action: approved ? "approve" : "deny",
      ...(typeof reason === "string" ? { reason } : {}),
    };
  }
  return { toolCallId, action: "result", value: output };
}
