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
  // The parts are folded by a reader object: this frame is suspended at every part, and V8 copies an async
  // frame's registers at each suspension and allocates them at each call, so it holds only what the loop needs.
  const reader = new StreamReader(sink, read.fallbackModel);
  const scope = read.scope;
  try {
    for await (const part of parts) {
      reader.add(part);
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
  return reader.response();
}

/** The response a model stream adds up to, part by part. */
class StreamReader {
  private text = "";
  // The first tool call on its own: the usual answer has one, and an array made here is held by the transcript
  // for the rest of the run, so it is made once, at its final size.
  private firstCall: ToolCall | null = null;
  private moreCalls: ToolCall[] | null = null;
  private reasoning: ReasoningPart[] | null = null;
  private reasoningText = "";
  private usage: ModelUsage | undefined = undefined;
  private stopReason: ModelResponse["stopReason"] = "unknown";
  private partial: { id: string; name: string; text: string }[] | null = null;

  constructor(
    private readonly sink: ModelStreamSink,
    private model: string,
  ) {}

  add(part: ModelStreamPart): void {
    switch (part.type) {
      case "text-delta":
        if (part.text.length === 0) break;
        this.text += part.text;
        this.sink.onTextDelta(part.text);
        break;
      case "reasoning-delta":
        this.reasoningText += part.text;
        this.sink.onReasoningDelta?.(part.text);
        break;
      case "reasoning":
        if (this.reasoning === null) this.reasoning = [];
        this.reasoning.push(part.reasoning);
        break;
      case "tool-call-delta": {
        this.partial ??= [];
        let entry = this.partial[part.index];
        if (entry === undefined) {
          entry = { id: "", name: "", text: "" };
          this.partial[part.index] = entry;
        }
        if (part.id) entry.id = part.id;
        if (part.name) entry.name += part.name;
        entry.text += part.argumentsDelta;
        break;
      }
      case "tool-call":
        this.addCall(toToolCall(part.id, part.name, part.arguments));
        break;
      case "usage":
        this.usage = part.usage;
        break;
      case "finish":
        this.stopReason = part.stopReason;
        if (part.model) this.model = part.model;
        break;
      case "error":
        throw part.error;
    }
  }

  private addCall(call: ToolCall): void {
    if (this.firstCall === null) this.firstCall = call;
    else if (this.moreCalls === null) this.moreCalls = [call];
    else this.moreCalls.push(call);
  }

  response(): ModelResponse {
    if (this.partial !== null) {
      for (const entry of this.partial) if (entry) this.addCall(toToolCall(entry.id, entry.name, entry.text));
    }
    const first = this.firstCall;
    const more = this.moreCalls;
    const toolCalls: ToolCall[] = first === null ? [] : more === null ? [first] : [first, ...more];
    let reasoning = this.reasoning;
    if (this.reasoningText && reasoning === null)
      reasoning = [{ type: "reasoning", text: this.reasoningText }];
    let stopReason = this.stopReason;
    if (toolCalls.length > 0 && stopReason === "unknown") stopReason = "tool_use";
    return {
      text: this.text,
      toolCalls,
      reasoning: reasoning ?? EMPTY_REASONING,
      usage: this.usage,
      stopReason,
      model: this.model,
    };
  }
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
