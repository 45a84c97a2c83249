import type { ModelStopReason, ModelStreamPart, ModelUsage } from "../../../contracts/language-model.js";
import { errorFromStreamEvent } from "../../http/error-from-stream-event.js";

/** The Responses API's `usage` (the fields Keel reads). */
export interface ResponsesUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  total_tokens?: number | null;
  input_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  output_tokens_details?: { reasoning_tokens?: number | null } | null;
}

type Item = Record<string, unknown>;

/**
 * The parts of a whole Responses API `response`: its `output[]` items in order — `reasoning` (its
 * summary text) as reasoning, `message` content (`output_text`, `refusal`) as text, `function_call` as tool
 * calls — then usage and the finish. A `failed` response throws its typed error.
 */
export function* readResponsesOutput(response: Item, provider: string): Generator<ModelStreamPart> {
  const error = response.error as { code?: string; message?: string } | null | undefined;
  if (response.status === "failed" || (error && typeof error === "object")) {
    throw errorFromStreamEvent({ provider, type: error?.code, message: error?.message, inStream: false });
  }
  const output = Array.isArray(response.output) ? (response.output as Item[]) : [];
  let calledTools = false;
  for (const item of output) {
    switch (item.type) {
      case "reasoning": {
        const text = [...texts(item.summary, "summary_text"), ...texts(item.content, "reasoning_text")].join(
          "\n\n",
        );
        if (text) yield { type: "reasoning", reasoning: { type: "reasoning", text } };
        break;
      }
      case "message":
        for (const text of texts(item.content, "output_text", "refusal")) yield { type: "text-delta", text };
        break;
      case "function_call":
        calledTools = true;
        yield {
          type: "tool-call",
          id: String(item.call_id ?? item.id ?? ""),
          name: String(item.name ?? ""),
          arguments: typeof item.arguments === "string" && item.arguments ? item.arguments : {},
        };
        break;
    }
  }
  if (response.usage) yield { type: "usage", usage: fromResponsesUsage(response.usage as ResponsesUsage) };
  const part: ModelStreamPart = { type: "finish", stopReason: stopReason(response, calledTools) };
  if (typeof response.model === "string") part.model = response.model;
  if (typeof response.id === "string") part.responseId = response.id;
  yield part;
}

/** The non-empty texts of the content parts of the given types (`refusal` parts keep theirs in `refusal`). */
function texts(content: unknown, ...types: string[]): string[] {
  if (!Array.isArray(content)) return [];
  const found: string[] = [];
  for (const part of content as Item[]) {
    if (typeof part.type !== "string" || !types.includes(part.type)) continue;
    const text = part.type === "refusal" ? part.refusal : part.text;
    if (typeof text === "string" && text) found.push(text);
  }
  return found;
}

function stopReason(response: Item, calledTools: boolean): ModelStopReason {
  if (response.status === "incomplete") {
    const reason = (response.incomplete_details as { reason?: string } | null | undefined)?.reason;
    if (reason === "max_output_tokens") return "max_tokens";
    if (reason === "content_filter") return "content_filter";
    return "unknown";
  }
  return calledTools ? "tool_use" : "end_turn";
}

/** Keel's usage from the Responses API's (cached input inside `input_tokens`, reasoning inside output). */
export function fromResponsesUsage(usage: ResponsesUsage): ModelUsage {
  const inputTokens = usage.input_tokens ?? 0;
  const outputTokens = usage.output_tokens ?? 0;
  const result: ModelUsage = {
    inputTokens,
    outputTokens,
    totalTokens: usage.total_tokens ?? inputTokens + outputTokens,
  };
  const cached = usage.input_tokens_details?.cached_tokens ?? 0;
  if (cached > 0) result.cacheReadTokens = cached;
  const written = usage.input_tokens_details?.cache_write_tokens ?? 0;
  if (written > 0) result.cacheCreationTokens = written;
  const reasoning = usage.output_tokens_details?.reasoning_tokens ?? 0;
  if (reasoning > 0) result.reasoningTokens = reasoning;
  return result;
}
