import {
  approximateTokens,
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStreamPart,
} from "../../../contracts/language-model.js";
import { type Message, messageText } from "../../../contracts/message.js";
import { assistantTurns } from "./assistant-turns.js";

/**
 * The offline default model: `/tool <id> <query>` calls that tool with `{query}`, a tool
 * result is reported back, and anything else is echoed as `Echo: <input> (history=N)`, N being the number of
 * messages before the latest user message.
 */
export class EchoModel implements LanguageModel {
  readonly specificationVersion = MODEL_SPECIFICATION_VERSION;
  readonly provider = "mock";
  readonly modelId: string;

  constructor(options: { modelId?: string } = {}) {
    this.modelId = options.modelId ?? "mock-echo";
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const messages = request.messages;
    const last = messages[messages.length - 1];
    const inputTokens = countTokens(messages);
    if (last?.role === "tool") {
      const text = `Tool ${last.toolName} returned: ${last.content}`;
      yield* answer(text, inputTokens, this.modelId);
      return;
    }
    const userIndex = lastUserIndex(messages);
    const input = userIndex === -1 ? "" : messageText(messages[userIndex]!);
    const match = /^\/tool\s+(\S+)\s*([\s\S]*)$/.exec(input.trim());
    if (match && request.tools?.some((tool) => tool.name === match[1])) {
      yield {
        type: "tool-call",
        // Numbered by the transcript, so ids stay unique in a session continued by another process.
        id: `call_${assistantTurns(messages) + 1}`,
        name: match[1]!,
        arguments: { query: match[2] ?? "" },
      };
      yield { type: "usage", usage: { inputTokens, outputTokens: 8 } };
      yield { type: "finish", stopReason: "tool_use", model: this.modelId };
      return;
    }
    yield* answer(`Echo: ${input} (history=${Math.max(0, userIndex)})`, inputTokens, this.modelId);
  }

  countTokens(text: string): number {
    return approximateTokens(text);
  }
}

function* answer(text: string, inputTokens: number, model: string): Generator<ModelStreamPart> {
  yield { type: "text-delta", text };
  yield { type: "usage", usage: { inputTokens, outputTokens: approximateTokens(text) } };
  yield { type: "finish", stopReason: "end_turn", model };
}

function lastUserIndex(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index--)
    if (messages[index]!.role === "user") return index;
  return -1;
}

function countTokens(messages: readonly Message[]): number {
  let total = 0;
  for (const message of messages) total += approximateTokens(messageText(message));
  return total;
}
