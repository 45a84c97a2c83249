import type { ModelStopReason, ModelStreamPart, ModelUsage } from "../../../contracts/language-model.js";
import { LLMConnectionError } from "../../../errors/error-classes.js";
import { errorFromStreamEvent } from "../../http/error-from-stream-event.js";
import type { ServerSentEvent } from "../../http/parse-server-sent-events.js";

/** Chat Completions' `usage` (the fields Keel reads). */
export interface ChatCompletionUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  total_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

interface ToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

/**
 * Read a streamed Chat Completions answer (`chat.completion.chunk` events up to `[DONE]`): content is streamed
 * as it comes, `reasoning_content` / `reasoning` deltas (vLLM, DeepSeek, OpenRouter) as reasoning, tool-call
 * deltas are assembled by index and given as whole calls at the end, the last chunk's `usage` (sent with
 * `stream_options.include_usage`) becomes the usage part. An `error` chunk throws its typed error; a
 * stream that ends with neither `[DONE]` nor a finish reason a connection error.
 */
export async function* readChatCompletionsStream(
  events: AsyncIterable<ServerSentEvent>,
  provider: string,
): AsyncGenerator<ModelStreamPart> {
  const calls: { id: string; name: string; arguments: string }[] = [];
  let usage: ChatCompletionUsage | undefined;
  let finishReason: string | undefined;
  let model: string | undefined;
  let responseId: string | undefined;
  let done = false;
  for await (const event of events) {
    if (event.data.trim() === "[DONE]") {
      done = true;
      break;
    }
    const chunk = JSON.parse(event.data) as Record<string, unknown>;
    if (chunk.error !== undefined) throw chunkError(chunk.error, provider);
    if (typeof chunk.model === "string") model ??= chunk.model;
    if (typeof chunk.id === "string") responseId ??= chunk.id;
    if (chunk.usage) usage = chunk.usage as ChatCompletionUsage;
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as Record<string, unknown>[]) : [];
    for (const choice of choices) {
      if (typeof choice.index === "number" && choice.index !== 0) continue;
      const delta = (choice.delta ?? {}) as Record<string, unknown>;
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === "string" && reasoning) yield { type: "reasoning-delta", text: reasoning };
      if (typeof delta.content === "string" && delta.content)
        yield { type: "text-delta", text: delta.content };
      if (typeof delta.refusal === "string" && delta.refusal)
        yield { type: "text-delta", text: delta.refusal };
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls as ToolCallDelta[]) {
          const index = call.index ?? calls.length;
          calls[index] ??= { id: "", name: "", arguments: "" };
          const entry = calls[index];
          if (call.id) entry.id = call.id;
          // The name comes whole in the first delta; servers that repeat it must not double it.
          if (call.function?.name) entry.name = call.function.name;
          if (call.function?.arguments) entry.arguments += call.function.arguments;
        }
      }
      if (typeof choice.finish_reason === "string") finishReason = choice.finish_reason;
    }
  }
  if (!done && finishReason === undefined) {
    throw new LLMConnectionError(`${provider}'s stream ended before [DONE]`, {
      context: { provider },
      hint: "The connection was closed early; try again",
    });
  }
  const called = calls.filter(Boolean);
  for (const call of called) {
    yield { type: "tool-call", id: call.id, name: call.name, arguments: call.arguments || {} };
  }
  if (usage) yield { type: "usage", usage: fromChatUsage(usage) };
  yield finish(finishReason, called.length > 0, { model, responseId });
}

/** The parts of a whole (non-streamed) `chat.completion`, for servers that do not stream. */
export function* readChatCompletion(
  completion: Record<string, unknown>,
  provider: string,
): Generator<ModelStreamPart> {
  if (completion.error !== undefined) throw chunkError(completion.error, provider);
  const choices = Array.isArray(completion.choices) ? (completion.choices as Record<string, unknown>[]) : [];
  const choice = choices[0] ?? {};
  const message = (choice.message ?? {}) as Record<string, unknown>;
  const reasoning = message.reasoning_content ?? message.reasoning;
  if (typeof reasoning === "string" && reasoning) {
    yield { type: "reasoning", reasoning: { type: "reasoning", text: reasoning } };
  }
  if (typeof message.content === "string" && message.content)
    yield { type: "text-delta", text: message.content };
  if (typeof message.refusal === "string" && message.refusal)
    yield { type: "text-delta", text: message.refusal };
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as ToolCallDelta[]) : [];
  for (const call of calls) {
    yield {
      type: "tool-call",
      id: call.id ?? "",
      name: call.function?.name ?? "",
      arguments: call.function?.arguments || {},
    };
  }
  if (completion.usage)
    yield { type: "usage", usage: fromChatUsage(completion.usage as ChatCompletionUsage) };
  yield finish(
    typeof choice.finish_reason === "string" ? choice.finish_reason : undefined,
    calls.length > 0,
    {
      model: typeof completion.model === "string" ? completion.model : undefined,
      responseId: typeof completion.id === "string" ? completion.id : undefined,
    },
  );
}

/**
 * Keel's usage from Chat Completions': `prompt_tokens` already counts the cached ones; reasoning tokens are
 * reported apart and stay inside `completion_tokens` (they are billed as output), never added again.
 */
export function fromChatUsage(usage: ChatCompletionUsage): ModelUsage {
  const inputTokens = usage.prompt_tokens ?? 0;
  const outputTokens = usage.completion_tokens ?? 0;
  const result: ModelUsage = {
    inputTokens,
    outputTokens,
    totalTokens: usage.total_tokens ?? inputTokens + outputTokens,
  };
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  if (cached > 0) result.cacheReadTokens = cached;
  const written = usage.prompt_tokens_details?.cache_write_tokens ?? 0;
  if (written > 0) result.cacheCreationTokens = written;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  if (reasoning > 0) result.reasoningTokens = reasoning;
  return result;
}

/** Which response a stream's parts belong to, when the server says. */
interface ResponseIdentity {
  model: string | undefined;
  responseId: string | undefined;
}

function finish(
  reason: string | undefined,
  calledTools: boolean,
  { model, responseId }: ResponseIdentity,
): ModelStreamPart {
  const part: ModelStreamPart = { type: "finish", stopReason: toStopReason(reason, calledTools) };
  if (model !== undefined) part.model = model;
  if (responseId !== undefined) part.responseId = responseId;
  return part;
}

function toStopReason(reason: string | undefined, calledTools: boolean): ModelStopReason {
  switch (reason) {
    case "tool_calls":
    case "function_call":
      return "tool_use";
    // Some servers (Ollama among them) say "stop" after tool calls.
    case "stop":
      return calledTools ? "tool_use" : "end_turn";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "content_filter";
    default:
      return calledTools ? "tool_use" : "unknown";
  }
}

function chunkError(error: unknown, provider: string) {
  if (typeof error === "string") return errorFromStreamEvent({ provider, message: error });
  const detail = (error ?? {}) as { type?: unknown; code?: unknown; message?: unknown };
  const type =
    typeof detail.type === "string" ? detail.type : typeof detail.code === "string" ? detail.code : undefined;
  return errorFromStreamEvent({
    provider,
    type,
    message: typeof detail.message === "string" ? detail.message : undefined,
  });
}
