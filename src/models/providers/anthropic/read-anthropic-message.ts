import type { ModelStreamPart } from "../../../contracts/language-model.js";
import { type AnthropicUsage, toModelUsage, toStopReason } from "./read-anthropic-stream.js";

/**
 * The parts of a whole (non-streamed) Messages API answer, for servers that answer `stream: true` with one
 * JSON message: text as one delta per block, thinking as reasoning, tool calls, usage and finish.
 */
export function* readAnthropicMessage(message: Record<string, unknown>): Generator<ModelStreamPart> {
  const content = Array.isArray(message.content) ? (message.content as Record<string, unknown>[]) : [];
  for (const block of content) {
    switch (block.type) {
      case "text":
        if (typeof block.text === "string" && block.text) yield { type: "text-delta", text: block.text };
        break;
      case "thinking": {
        const text = typeof block.thinking === "string" ? block.thinking : "";
        yield {
          type: "reasoning",
          reasoning:
            typeof block.signature === "string" && block.signature
              ? { type: "reasoning", text, signature: block.signature }
              : { type: "reasoning", text },
        };
        break;
      }
      case "redacted_thinking":
        yield {
          type: "reasoning",
          reasoning: { type: "reasoning", text: "", redactedData: String(block.data) },
        };
        break;
      case "tool_use":
        yield {
          type: "tool-call",
          id: String(block.id),
          name: String(block.name),
          arguments: (block.input ?? {}) as Record<string, unknown>,
        };
        break;
    }
  }
  yield { type: "usage", usage: toModelUsage((message.usage ?? {}) as AnthropicUsage) };
  const finish: ModelStreamPart = { type: "finish", stopReason: toStopReason(message.stop_reason as string) };
  if (typeof message.model === "string") finish.model = message.model;
  if (typeof message.id === "string") finish.responseId = message.id;
  yield finish;
}
