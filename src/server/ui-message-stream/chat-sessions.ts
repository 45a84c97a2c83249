import { randomUUID } from "node:crypto";
import type { Message } from "../../contracts/message.js";
import type { RunRecord } from "../../contracts/run-types.js";
import type { Runtime } from "../../runtime/runtime.js";
import { ChatRequestError } from "./chat-request.js";

/**
 * A chat's conversation lives in one Keel session, whose transcript only grows. Regenerating an answer cannot take
 * the answer out of it, so the conversation moves to a new session holding the transcript before that answer;
 * the chat's first session keeps, under this key of its state, the id of the session the chat goes on in.
 */
const CURRENT_SESSION = "keel.chat.currentSession";

/** The Keel session a chat goes on in: the one its id names, or the one its last regeneration moved it to. */
export async function currentChatSession(runtime: Runtime, chatSession: string): Promise<string> {
  await runtime.ready();
  const current = (await runtime.sessionManager.getState(chatSession))[CURRENT_SESSION];
  return typeof current === "string" ? current : chatSession;
}

const HINT_LAST = "Regenerate the chat's last answer, once its run has finished";

/**
 * Move a chat onto a new session for regenerating its last answer, and return that session: it holds the
 * current session's transcript up to the user message that asked for the answer (that message is asked again
 * by the new run), its artifacts and its state. `messageId`, when the client names the answer, is the answer's
 * run id (Keel makes the run id the assistant message's id); `inputText` is the question the client resends.
 */
export async function forkForRegenerate(
  runtime: Runtime,
  chat: { chatSession: string; current: string; messageId: string | undefined; inputText: string },
): Promise<string> {
  const last = await lastRun(runtime, chat.current);
  if (last === undefined)
    throw new ChatRequestError("The chat has no answer to regenerate", 409, "Send a message first");
  if (chat.messageId !== undefined && chat.messageId !== last.runId) {
    const named = await runtime.getRun(chat.messageId);
    if (named === null || named.sessionId !== chat.current)
      throw new ChatRequestError(`No answer ${chat.messageId} in this chat`, 404, HINT_LAST);
    throw new ChatRequestError("Only the chat's last answer can be regenerated", 409, HINT_LAST);
  }
  if (last.status !== "done")
    throw new ChatRequestError(
      `The chat's last run is ${last.status === "waiting" ? "waiting for approval" : "still running"}`,
      409,
      "Answer or cancel it first, then regenerate",
    );
  const store = runtime.sessionManager;
  const transcript = await store.loadMessages(chat.current);
  const asked = lastQuestion(transcript, chat.inputText);
  if (asked === undefined)
    throw new ChatRequestError(
      "The chat's last question is not the one the request sends",
      409,
      "Send the chat's messages up to the answer to regenerate, as the AI SDK's regenerate() does",
    );
  const fork = `${chat.chatSession}@${randomUUID()}`;
  const [state, artifacts] = await Promise.all([
    store.getState(chat.current),
    store.listArtifacts(chat.current),
  ]);
  await store.appendMessages(fork, transcript.slice(0, asked));
  for (const artifact of artifacts) await store.saveArtifact(fork, artifact);
  const { [CURRENT_SESSION]: _pointer, ...own } = state;
  await store.setState(fork, own);
  const chatState = chat.chatSession === chat.current ? state : await store.getState(chat.chatSession);
  await store.setState(chat.chatSession, { ...chatState, [CURRENT_SESSION]: fork });
  return fork;
}

/** The session's latest run. */
async function lastRun(runtime: Runtime, sessionId: string): Promise<RunRecord | undefined> {
  const runs = await runtime.listRuns({ sessionId });
  let latest: RunRecord | undefined;
  for (const run of runs) if (latest === undefined || run.createdAt >= latest.createdAt) latest = run;
  return latest;
}

/** Where the last user message with this text is in the transcript: the question of the session's last run. */
function lastQuestion(transcript: readonly Message[], text: string): number | undefined {
  for (let at = transcript.length - 1; at >= 0; at--) {
    const message = transcript[at]!;
    if (message.role === "user" && textOf(message.content) === text) return at;
  }
  return undefined;
}

function textOf(content: Extract<Message, { role: "user" }>["content"]): string {
  if (typeof content === "string") return content;
  return content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}
