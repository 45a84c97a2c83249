import { type Context, Hono } from "hono";
import type { ToolDecision } from "../../contracts/tool-decision.js";
import {
  DecisionError,
  IllegalTransitionError,
  RunBusyError,
  UnknownRunError,
} from "../../errors/error-classes.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { RunStreamChunk } from "../../runtime/stream-chunk.js";
import {
  approvalAnswers,
  type ChatRequestBody,
  ChatRequestError,
  lastUserText,
  parseChatRequest,
  toolOutputAnswers,
} from "./chat-request.js";
import { currentChatSession, forkForRegenerate } from "./chat-sessions.js";
import { UI_MESSAGE_PROFILES, type UiMessageProfile } from "./ui-message-chunk.js";
import { uiMessageStreamResponse } from "./ui-message-sse.js";
import { toUiMessageChunks, type UiMessageTranslatorOptions } from "./ui-message-translator.js";

export interface UiMessageStreamAppOptions {
  /** The agent `POST /chat` talks to; without it only `POST /:agentId/chat` serves. */
  agentId?: string;
  /** The AI SDK major of the clients; `v6` by default, and a request may ask for another with `?profile=v5`. */
  profile?: UiMessageProfile;
  /** A comment frame after this long without a chunk, so proxies keep a quiet stream open; 15 s by default, 0 for none. */
  keepAliveMs?: number;
  /** The text a failed run shows in the chat; Keel's own (redacted) error message by default. */
  errorText?: UiMessageTranslatorOptions["errorText"];
  /**
   * The Keel session of a chat; the chat id by default. A server with tenants (auth) keys it by the tenant too,
   * so one tenant's chat id never reaches another's session, run or stream.
   */
  sessionId?: (chatId: string, c: Context) => string;
}

/**
 * A Hono app a stock AI SDK `useChat` (`DefaultChatTransport`) talks to: `POST /chat` or `POST /:agentId/chat`
 * with the chat's messages streams the answer as a UI message stream, the chat id being Keel's session id, so
 * the history lives in Keel's session and only the last message is read; `GET /chat/:chatId/stream` (or
 * `/:agentId/chat/:chatId/stream`) re-attaches to the chat's run in flight, 204 when none runs. A tool call
 * waiting for approval reaches the client as an approval request, and the client's answer, which comes back in
 * the next POST's messages, decides it and streams the rest of the run into the same message.
 */
export function createUiMessageStreamApp(runtime: Runtime, options: UiMessageStreamAppOptions = {}): Hono {
  const app = new Hono();
  /** Each chat's latest run started here: what a resume GET re-attaches to while it runs. */
  const chatRuns = new Map<string, string>();
  const sessionOf = options.sessionId ?? ((chatId: string) => chatId);
  const streamOptions = { keepAliveMs: options.keepAliveMs ?? 15_000 };
  const translation = (profile: UiMessageProfile): UiMessageTranslatorOptions =>
    options.errorText === undefined ? { profile } : { profile, errorText: options.errorText };
  // Kept while the run goes on, whoever reads it, so the map holds only runs in flight.
  const remember = (chatId: string, runId: string): void => {
    const live = runtime.liveRun(runId);
    if (live === undefined) return;
    chatRuns.set(chatId, runId);
    const forget = () => {
      if (chatRuns.get(chatId) === runId) chatRuns.delete(chatId);
    };
    live.done.then(forget, forget);
  };

  const chat = async (c: Context, agentId: string | undefined): Promise<Response> => {
    const profile = profileOf(c, options);
    if (agentId === undefined) throw noAgent();
    if (runtime.getAgentInfo(agentId) === null) throw unknownAgent(agentId);
    const parsed = parseChatRequest(await jsonBody(c));
    const chatSession = sessionOf(parsed.id, c);
    const request = { ...parsed, id: await currentChatSession(runtime, chatSession) };
    const { chunks, sessionId } =
      parsed.trigger === "regenerate-message"
        ? await regenerate(runtime, { request, chatSession, agentId })
        : { chunks: await streamFor(runtime, request, agentId), sessionId: request.id };
    const first = await firstChunk(chunks);
    if (first === undefined) return uiMessageStreamResponse(emptyChunks(), streamOptions);
    remember(sessionId, first.runId);
    return uiMessageStreamResponse(
      toUiMessageChunks(prepend(first, chunks), translation(profile)),
      streamOptions,
    );
  };

  const resume = async (c: Context, agentId: string | undefined): Promise<Response> => {
    const profile = profileOf(c, options);
    const chatId = await currentChatSession(runtime, sessionOf(c.req.param("chatId") ?? "", c));
    const runId = await runningRunOf(runtime, chatRuns, { chatId, agentId });
    if (runId === undefined) return c.body(null, 204);
    return uiMessageStreamResponse(
      toUiMessageChunks(runtime.attach(runId), translation(profile)),
      streamOptions,
    );
  };

  app.post("/chat", (c) => chat(c, options.agentId));
  app.post("/:agentId/chat", (c) => chat(c, c.req.param("agentId")));
  app.get("/chat/:chatId/stream", (c) => resume(c, options.agentId));
  app.get("/:agentId/chat/:chatId/stream", (c) => resume(c, c.req.param("agentId")));
  app.onError((error, c) => {
    if (error instanceof ChatRequestError) {
      return c.json(
        { error: { code: "bad_request", message: error.message, hint: error.hint } },
        error.status,
      );
    }
    const refused = refusal(error);
    if (refused !== undefined) return c.json({ error: refused.body }, refused.status);
    return c.json({ error: { code: "internal", message: "The chat request failed on the server" } }, 500);
  });
  return app;
}

/** The run stream a chat request asks for: decisions on a waiting run, or a new run with the user's message. */
async function streamFor(
  runtime: Runtime,
  request: ChatRequestBody,
  agentId: string,
): Promise<AsyncIterableIterator<RunStreamChunk>> {
  const answers = approvalAnswers(request);
  if (answers.length > 1) {
    throw new ChatRequestError("The message answers approvals of more than one run", 400, HINT_ONE_RUN);
  }
  const answer = answers[0];
  if (answer !== undefined) {
    const record = await runtime.getRun(answer.runId);
    // Another chat's run is not this chat's to decide, and is not admitted to exist.
    if (record === null || record.sessionId !== request.id) {
      throw new ChatRequestError(`No run ${answer.runId} in chat ${request.id}`, 404, HINT_APPROVAL);
    }
    return runtime.stream({ runId: answer.runId, decisions: answer.decisions });
  }
  const outputs = await waitingRunAnswers(runtime, request);
  if (outputs !== undefined) return runtime.stream(outputs);
  const inputText = lastUserText(request);
  if (inputText === undefined) {
    throw new ChatRequestError("The last message is neither the user's text nor an answer", 400, HINT_LAST);
  }
  return runtime.stream({ agentId, inputText, sessionId: request.id });
}

/**
 * A new run for the chat's last question, its last answer left out: `DefaultChatTransport` sends
 * `trigger: "regenerate-message"` with the messages up to that question (and the answer's id as `messageId`).
 */
async function regenerate(
  runtime: Runtime,
  { request, chatSession, agentId }: { request: ChatRequestBody; chatSession: string; agentId: string },
): Promise<{ chunks: AsyncIterableIterator<RunStreamChunk>; sessionId: string }> {
  const inputText = lastUserText(request);
  if (inputText === undefined) {
    throw new ChatRequestError("A regenerate request must end with the user's message", 400, HINT_LAST);
  }
  const sessionId = await forkForRegenerate(runtime, {
    chatSession,
    current: request.id,
    messageId: request.messageId,
    inputText,
  });
  return { chunks: runtime.stream({ agentId, inputText, sessionId }), sessionId };
}

const HINT_ONE_RUN = "Answer the approvals of the last assistant message only";
const HINT_APPROVAL = "Send approval answers in the chat whose run asked for them";
const HINT_LAST =
  "End messages with a user message that has a text part, or an assistant message with approval responses";

/** Tool outputs the client set for calls of the chat's waiting run (how an AI SDK 5 client answers). */
async function waitingRunAnswers(
  runtime: Runtime,
  request: ChatRequestBody,
): Promise<{ runId: string; decisions: ToolDecision[] } | undefined> {
  if (request.messages[request.messages.length - 1]?.role !== "assistant") return undefined;
  const waiting = await runtime.listRuns({ sessionId: request.id, status: "waiting" });
  for (const run of waiting.reverse()) {
    const pending = new Set(run.pendingToolCalls.map((call) => call.toolCallId));
    const decisions = toolOutputAnswers(request, pending);
    if (decisions.length > 0) return { runId: run.runId, decisions };
  }
  return undefined;
}

/** The chat's run going on now, if any: the one started here last, else one the store says runs. */
async function runningRunOf(
  runtime: Runtime,
  chatRuns: Map<string, string>,
  { chatId, agentId }: { chatId: string; agentId: string | undefined },
): Promise<string | undefined> {
  const candidates = [chatRuns.get(chatId)].filter((id): id is string => id !== undefined);
  if (candidates.length === 0) {
    const running = await runtime.listRuns({ sessionId: chatId, status: "running" });
    candidates.push(...running.map((run) => run.runId).reverse());
  }
  for (const runId of candidates) {
    const record = await runtime.getRun(runId);
    if (record === null || record.sessionId !== chatId) continue;
    if (agentId !== undefined && record.agentId !== agentId) continue;
    if (record.status === "running" || record.status === "created") return runId;
  }
  // A run still live here whose record the store has not yet caught up with.
  const latest = chatRuns.get(chatId);
  return latest !== undefined && runtime.liveRun(latest) !== undefined ? latest : undefined;
}

function profileOf(c: Context, options: UiMessageStreamAppOptions): UiMessageProfile {
  const asked = c.req.query("profile");
  if (asked === undefined) return options.profile ?? "v6";
  if ((UI_MESSAGE_PROFILES as readonly string[]).includes(asked)) return asked as UiMessageProfile;
  throw new ChatRequestError(
    `Unknown profile "${asked.slice(0, 20)}"`,
    400,
    `Use one of ${UI_MESSAGE_PROFILES.join(", ")}`,
  );
}

async function jsonBody(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw new ChatRequestError(
      "The request body is not JSON",
      400,
      "Send the chat request as application/json",
    );
  }
}

/**
 * The stream's first chunk, read before answering: a run or decision the runtime refuses rejects it, and that
 * becomes an HTTP error the client shows, rather than a stream that fails after a 200.
 */
async function firstChunk(chunks: AsyncIterator<RunStreamChunk>): Promise<RunStreamChunk | undefined> {
  const first = await chunks.next();
  return first.done === true ? undefined : first.value;
}

async function* prepend(
  first: RunStreamChunk,
  rest: AsyncIterator<RunStreamChunk>,
): AsyncGenerator<RunStreamChunk> {
  yield first;
  try {
    for (;;) {
      const next = await rest.next();
      if (next.done === true) return;
      yield next.value;
    }
  } finally {
    // Leaving early (the client went away) detaches from the run; the run goes on.
    await rest.return?.();
  }
}

async function* emptyChunks(): AsyncGenerator<never> {}

function refusal(error: unknown): { status: 404 | 409; body: Record<string, unknown> } | undefined {
  if (error instanceof UnknownRunError) return { status: 404, body: keelErrorBody(error) };
  if (
    error instanceof DecisionError ||
    error instanceof RunBusyError ||
    error instanceof IllegalTransitionError
  ) {
    return { status: 409, body: keelErrorBody(error) };
  }
  return undefined;
}

function keelErrorBody(error: UnknownRunError | DecisionError | RunBusyError | IllegalTransitionError) {
  return {
    code: error.code,
    message: error.message,
    ...(error.hint === undefined ? {} : { hint: error.hint }),
  };
}

function noAgent(): ChatRequestError {
  return new ChatRequestError("No agent for /chat", 404, "POST /:agentId/chat, or give the app an agentId");
}

function unknownAgent(agentId: string): ChatRequestError {
  return new ChatRequestError(
    `Unknown agent "${agentId.slice(0, 100)}"`,
    404,
    "POST to the chat of a configured agent",
  );
}
