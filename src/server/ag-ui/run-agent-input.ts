import { AgUiInputError } from "./ag-ui-input-error.js";
import type { AgUiResumeEntry, RunAgentInput } from "./ag-ui-types.js";

const BODY_HINT =
  "POST a RunAgentInput: { threadId, runId, messages: [...], tools, context, state, forwardedProps }";

/** The body checked as a RunAgentInput: the keys Keel reads must have their types; the others pass through. */
export function parseRunAgentInput(body: unknown): RunAgentInput {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new AgUiInputError("The request body is not a JSON object", { hint: BODY_HINT });
  }
  const input = body as Record<string, unknown>;
  for (const key of ["threadId", "runId"] as const) {
    if (typeof input[key] !== "string" || input[key] === "") {
      throw new AgUiInputError(`RunAgentInput.${key} must be a non-empty string`, { hint: BODY_HINT });
    }
  }
  if (!Array.isArray(input.messages)) {
    throw new AgUiInputError("RunAgentInput.messages must be an array", { hint: BODY_HINT });
  }
  if (input.resume !== undefined) checkResume(input.resume);
  return input as unknown as RunAgentInput;
}

function checkResume(resume: unknown): asserts resume is AgUiResumeEntry[] {
  const hint = "resume is a list of { interruptId, status: 'resolved' | 'cancelled', payload? }";
  if (!Array.isArray(resume)) throw new AgUiInputError("RunAgentInput.resume must be an array", { hint });
  for (const entry of resume) {
    const ok =
      typeof entry === "object" &&
      entry !== null &&
      typeof (entry as Record<string, unknown>).interruptId === "string" &&
      ["resolved", "cancelled"].includes((entry as Record<string, unknown>).status as string);
    if (!ok) throw new AgUiInputError("A resume entry is malformed", { hint });
  }
}

/**
 * The text of the last user message: Keel keeps the conversation in its session (the thread), so only the new
 * turn is read. A message's content is a string, or parts of which the text ones count.
 */
export function lastUserText(input: RunAgentInput): string {
  for (let i = input.messages.length - 1; i >= 0; i--) {
    const message = input.messages[i];
    if (typeof message !== "object" || message === null || message.role !== "user") continue;
    const text = textOf(message.content);
    if (text !== "") return text;
  }
  throw new AgUiInputError("RunAgentInput.messages has no user message with text", {
    hint: "End messages with { id, role: 'user', content: '...' }, or send resume to answer interrupts",
  });
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      typeof part === "object" && part !== null && (part as Record<string, unknown>).type === "text"
        ? String((part as Record<string, unknown>).text ?? "")
        : "",
    )
    .join("");
}
