import type { LanguageModel } from "../../contracts/language-model.js";
import { AgentApiError, AGENT_API_ERROR_CODES as CODES } from "../wire/api-error.js";
import { fromWireMessages, type WireFunction } from "../wire/llm-messages.js";
import { MessageSchema } from "../wire/run-result.js";

/** A model request from a proxy call's wire messages and functions. */
export function requestOf(data: Record<string, unknown>, signal: AbortSignal) {
  const messages = MessageSchema.array().safeParse(data.messages ?? []);
  if (!messages.success)
    throw new AgentApiError(CODES.INVALID_ARGUMENT, "messages are not protocol messages");
  const funcs = (Array.isArray(data.funcs) ? data.funcs : []) as WireFunction[];
  return {
    ...fromWireMessages(messages.data, funcs),
    options: (data.extra_args ?? {}) as Record<string, unknown>,
    signal,
  };
}

/** A tool call as the wire writes it, its arguments a JSON string. */
export function wireToolCall(part: {
  id: string;
  name: string;
  arguments: string | Record<string, unknown>;
}) {
  const args = typeof part.arguments === "string" ? part.arguments : JSON.stringify(part.arguments);
  return { id: part.id, type: "function", function: { name: part.name, arguments: args } };
}

/** A whole answer of a model, for the proxy's single `invoke_llm`. */
export async function collectModel(
  models: ReadonlyMap<string, LanguageModel>,
  data: Record<string, unknown>,
  signal: AbortSignal,
) {
  let text = "";
  const toolCalls: Record<string, unknown>[] = [];
  for await (const part of languageModel(models, data).stream(requestOf(data, signal))) {
    if (part.type === "text-delta") text += part.text;
    else if (part.type === "tool-call") toolCalls.push(wireToolCall(part));
    else if (part.type === "error") throw new AgentApiError(CODES.RUNTIME_ERROR, part.error.message);
  }
  return { text, toolCalls };
}

/** The host's language model a call names; a rerank model or an unknown id is `invalid_argument`. */
export function languageModel(
  models: ReadonlyMap<string, LanguageModel>,
  data: Record<string, unknown>,
): LanguageModel {
  const model = models.get(String(data.llm_model_uuid));
  if (!model)
    throw new AgentApiError(
      CODES.INVALID_ARGUMENT,
      `model ${String(data.llm_model_uuid)} is not a language model`,
    );
  return model;
}
