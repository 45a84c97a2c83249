import type { ModelStopReason, ModelStreamPart, ModelUsage } from "../../../contracts/language-model.js";
import { LLMConnectionError } from "../../../errors/error-classes.js";
import { errorFromStreamEvent } from "../../http/error-from-stream-event.js";
import type { ServerSentEvent } from "../../http/parse-server-sent-events.js";

/** Anthropic's `usage` object (the fields Keel reads). */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

type OpenBlock =
  | { kind: "tool"; id: string; name: string; json: string; input: unknown }
  | { kind: "thinking"; text: string; signature: string }
  | { kind: "redacted"; data: string }
  | { kind: "text" };

/**
 * Read a streamed Messages API answer (`message_start`, `content_block_start` / `_delta` / `_stop` with
 * `text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`, `message_delta`, `message_stop`,
 * `ping`, `error`). Text is streamed as it comes; thinking streams as reasoning deltas and ends as a whole
 * reasoning part with its signature (so it can be replayed, never as output text); a tool call is one
 * `tool-call` part at its block's end. Usage (cumulative in `message_delta`) and finish come at `message_stop`;
 * an `error` event throws its typed error, and a stream that ends before `message_stop` a connection error.
 */
export async function* readAnthropicStream(
  events: AsyncIterable<ServerSentEvent>,
  provider = "Anthropic",
): AsyncGenerator<ModelStreamPart> {
  const blocks = new Map<number, OpenBlock>();
  const usage: AnthropicUsage = {};
  let model: string | undefined;
  let responseId: string | undefined;
  let stopReason: string | null | undefined;
  for await (const event of events) {
    const data = JSON.parse(event.data) as Record<string, unknown>;
    const type = typeof data.type === "string" ? data.type : event.event;
    switch (type) {
      case "message_start": {
        const message = (data.message ?? {}) as Record<string, unknown>;
        if (typeof message.model === "string") model = message.model;
        if (typeof message.id === "string") responseId = message.id;
        Object.assign(usage, message.usage);
        break;
      }
      case "content_block_start": {
        const index = data.index as number;
        const block = (data.content_block ?? {}) as Record<string, unknown>;
        if (block.type === "tool_use") {
          blocks.set(index, {
            kind: "tool",
            id: String(block.id ?? ""),
            name: String(block.name ?? ""),
            json: "",
            input: block.input,
          });
        } else if (block.type === "thinking") {
          const text = typeof block.thinking === "string" ? block.thinking : "";
          blocks.set(index, { kind: "thinking", text, signature: String(block.signature ?? "") });
          if (text) yield { type: "reasoning-delta", text };
        } else if (block.type === "redacted_thinking") {
          blocks.set(index, { kind: "redacted", data: String(block.data ?? "") });
        } else if (block.type === "text") {
          blocks.set(index, { kind: "text" });
          if (typeof block.text === "string" && block.text) yield { type: "text-delta", text: block.text };
        }
        break;
      }
      case "content_block_delta": {
        const delta = (data.delta ?? {}) as Record<string, unknown>;
        const block = blocks.get(data.index as number);
        if (delta.type === "text_delta") {
          if (typeof delta.text === "string" && delta.text) yield { type: "text-delta", text: delta.text };
        } else if (delta.type === "input_json_delta" && block?.kind === "tool") {
          if (typeof delta.partial_json === "string") block.json += delta.partial_json;
        } else if (delta.type === "thinking_delta" && block?.kind === "thinking") {
          const text = typeof delta.thinking === "string" ? delta.thinking : "";
          block.text += text;
          if (text) yield { type: "reasoning-delta", text };
        } else if (delta.type === "signature_delta" && block?.kind === "thinking") {
          block.signature += typeof delta.signature === "string" ? delta.signature : "";
        }
        break;
      }
      case "content_block_stop": {
        const index = data.index as number;
        const block = blocks.get(index);
        blocks.delete(index);
        if (block) yield* closeBlock(block);
        break;
      }
      case "message_delta": {
        const delta = (data.delta ?? {}) as Record<string, unknown>;
        if (delta.stop_reason !== undefined) stopReason = delta.stop_reason as string | null;
        if (data.usage) Object.assign(usage, data.usage);
        break;
      }
      case "message_stop": {
        yield { type: "usage", usage: toModelUsage(usage) };
        const finish: ModelStreamPart = { type: "finish", stopReason: toStopReason(stopReason) };
        if (model !== undefined) finish.model = model;
        if (responseId !== undefined) finish.responseId = responseId;
        yield finish;
        return;
      }
      case "error": {
        const error = (data.error ?? {}) as { type?: string; message?: string };
        throw errorFromStreamEvent({ provider, ...error });
      }
      // `ping` and event types added later are skipped, as the API's versioning policy asks.
    }
  }
  throw new LLMConnectionError(`${provider}'s stream ended before message_stop`, {
    context: { provider },
    hint: "The connection was closed early; try again",
  });
}

function* closeBlock(block: OpenBlock): Generator<ModelStreamPart> {
  switch (block.kind) {
    case "tool":
      yield {
        type: "tool-call",
        id: block.id,
        name: block.name,
        arguments: block.json !== "" ? block.json : isObject(block.input) ? block.input : {},
      };
      break;
    case "thinking":
      yield {
        type: "reasoning",
        reasoning: block.signature
          ? { type: "reasoning", text: block.text, signature: block.signature }
          : { type: "reasoning", text: block.text },
      };
      break;
    case "redacted":
      yield { type: "reasoning", reasoning: { type: "reasoning", text: "", redactedData: block.data } };
      break;
  }
}

/**
 * Keel's usage from Anthropic's: Anthropic's `input_tokens` leaves out the cached ones, Keel's `inputTokens`
 * counts them all (the cost of non-cached input is input − cache read − cache creation).
 */
export function toModelUsage(usage: AnthropicUsage): ModelUsage {
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheCreation = usage.cache_creation_input_tokens ?? 0;
  const inputTokens = (usage.input_tokens ?? 0) + cacheRead + cacheCreation;
  const outputTokens = usage.output_tokens ?? 0;
  const result: ModelUsage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  if (cacheRead > 0) result.cacheReadTokens = cacheRead;
  if (cacheCreation > 0) result.cacheCreationTokens = cacheCreation;
  return result;
}

export function toStopReason(reason: string | null | undefined): ModelStopReason {
  switch (reason) {
    case "end_turn":
    case "tool_use":
    case "max_tokens":
    case "stop_sequence":
      return reason;
    case "refusal":
      return "content_filter";
    default:
      return "unknown";
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
