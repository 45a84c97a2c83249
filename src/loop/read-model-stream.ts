import type { ModelResponse } from "../contracts/hook.js";
import type { ModelStreamPart, ModelUsage } from "../contracts/language-model.js";
import type { ReasoningPart, ToolCall } from "../contracts/message.js";
import { LLMConnectionError } from "../errors/error-classes.js";
import { KeelError } from "../errors/keel-error.js";
import type { CancelScope } from "./cancel-scope.js";

export interface ModelStreamSink {
  onTextDelta(text: string): void;
  onReasoningDelta?(text: string): void;
}

/**
 * Read a model's stream into one response: text deltas go to the sink as they come, tool-call deltas are
 * assembled by index, an `error` part is thrown as its typed error. Stops early when the run is cancelled.
 */
export async function readModelStream(
  parts: AsyncIterable<ModelStreamPart>,
  sink: ModelStreamSink,
  read: { scope: CancelScope; fallbackModel: string },
): Promise<ModelResponse> {
  const { scope, fallbackModel } = read;
  let text = "";
  const toolCalls: ToolCall[] = [];
  let reasoning: ReasoningPart[] | null = null;
  let reasoningText = "";
  let usage: ModelUsage | undefined;
  let stopReason: ModelResponse["stopReason"] = "unknown";
  let model = fallbackModel;
  let partial: { id: string; name: string; text: string }[] | null = null;
  try {
    for await (const part of parts) {
      switch (part.type) {
        case "text-delta":
          if (part.text.length === 0) break;
          text += part.text;
          sink.onTextDelta(part.text);
          break;
        case "reasoning-delta":
          reasoningText += part.text;
          sink.onReasoningDelta?.(part.text);
          break;
        case "reasoning":
          if (reasoning === null) reasoning = [];
          reasoning.push(part.reasoning);
          break;
        case "tool-call-delta": {
          partial ??= [];
          let entry = partial[part.index];
          if (entry === undefined) {
            entry = { id: "", name: "", text: "" };
            partial[part.index] = entry;
          }
          if (part.id) entry.id = part.id;
          if (part.name) entry.name += part.name;
          entry.text += part.argumentsDelta;
          break;
        }
        case "tool-call":
          toolCalls.push(toToolCall(part.id, part.name, part.arguments));
          break;
        case "usage":
          usage = part.usage;
          break;
        case "finish":
          stopReason = part.stopReason;
          if (part.model) model = part.model;
          break;
        case "error":
          throw part.error;
      }
      if (scope.cancelled) break;
    }
  } catch (error) {
    if (KeelError.isInstance(error) || scope.cancelled) throw error;
    throw new LLMConnectionError(
      `The model stream failed: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
  if (partial !== null) {
    for (const entry of partial) if (entry) toolCalls.push(toToolCall(entry.id, entry.name, entry.text));
  }
  if (reasoningText && reasoning === null) reasoning = [{ type: "reasoning", text: reasoningText }];
  if (toolCalls.length > 0 && stopReason === "unknown") stopReason = "tool_use";
  return { text, toolCalls, reasoning: reasoning ?? EMPTY_REASONING, usage, stopReason, model };
}

const EMPTY_REASONING: ReasoningPart[] = [];
let generatedIds = 0;

/** A tool call from the model, its argument text parsed; text that is not a JSON object is kept as an error. */
export function toToolCall(id: string, name: string, input: string | Record<string, unknown>): ToolCall {
  const callId = id || `call_${++generatedIds}`;
  if (typeof input !== "string") return { id: callId, name, arguments: input };
  if (input.trim() === "") return { id: callId, name, arguments: {}, rawArguments: input };
  try {
    const parsed: unknown = JSON.parse(input);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      return { id: callId, name, arguments: parsed as Record<string, unknown>, rawArguments: input };
    }
    return {
      id: callId,
      name,
      arguments: {},
      rawArguments: input,
      argumentsError: "the arguments are not a JSON object",
    };
  } catch (error) {
    return {
      id: callId,
      name,
      arguments: {},
      rawArguments: input,
      argumentsError: `the arguments are not valid JSON (${(error as Error).message})`,
    };
  }
}
