import type { ModelUsage } from "../contracts/language-model.js";
import type { RunUsage } from "../contracts/run-types.js";

/**
 * The OpenTelemetry GenAI semantic-convention names Keel's spans use. Written out rather than imported from
 * `@opentelemetry/semantic-conventions/incubating`: they are plain strings, and that package is not one a Keel
 * user is asked to install.
 */
export const GEN_AI = {
  OPERATION_NAME: "gen_ai.operation.name",
  PROVIDER_NAME: "gen_ai.provider.name",
  AGENT_ID: "gen_ai.agent.id",
  AGENT_NAME: "gen_ai.agent.name",
  CONVERSATION_ID: "gen_ai.conversation.id",
  REQUEST_MODEL: "gen_ai.request.model",
  RESPONSE_MODEL: "gen_ai.response.model",
  RESPONSE_FINISH_REASONS: "gen_ai.response.finish_reasons",
  INPUT_TOKENS: "gen_ai.usage.input_tokens",
  OUTPUT_TOKENS: "gen_ai.usage.output_tokens",
  CACHE_READ_INPUT_TOKENS: "gen_ai.usage.cache_read.input_tokens",
  CACHE_CREATION_INPUT_TOKENS: "gen_ai.usage.cache_creation.input_tokens",
  REASONING_OUTPUT_TOKENS: "gen_ai.usage.reasoning.output_tokens",
  TOOL_NAME: "gen_ai.tool.name",
  TOOL_CALL_ID: "gen_ai.tool.call.id",
  TOOL_TYPE: "gen_ai.tool.type",
  TOOL_CALL_ARGUMENTS: "gen_ai.tool.call.arguments",
  TOOL_CALL_RESULT: "gen_ai.tool.call.result",
  OUTPUT_MESSAGES: "gen_ai.output.messages",
  ERROR_TYPE: "error.type",
} as const;

/** Span attributes as OpenTelemetry takes them. */
export type SpanAttributes = Record<string, string | number | boolean | string[]>;

// Keel's model providers and the AI SDK's provider ids (`openai.chat`, `google.generative-ai`) by their first
// part, mapped to the convention's well-known names; anything else is reported as it is.
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  google: "gcp.gemini",
  vertex: "gcp.vertex_ai",
  "amazon-bedrock": "aws.bedrock",
  bedrock: "aws.bedrock",
  azure: "azure.ai.openai",
  mistral: "mistral_ai",
  xai: "x_ai",
};

/** The `gen_ai.provider.name` of a Keel model's `provider`. */
export function genAiProviderName(provider: string): string {
  const dot = provider.indexOf(".");
  const head = (dot === -1 ? provider : provider.slice(0, dot)).toLowerCase();
  return PROVIDER_NAMES[head] ?? head;
}

/** Keel's stop reasons as the convention's finish reasons. */
const FINISH_REASONS: Readonly<Record<string, string>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_call",
  max_tokens: "length",
  content_filter: "content_filter",
};

export function genAiFinishReason(stopReason: string): string {
  return FINISH_REASONS[stopReason] ?? stopReason;
}

// One frozen array per finish reason: `gen_ai.response.finish_reasons` is set on every chat span, so Keel makes
// no array per call. The SDK still copies an array attribute as it stores it (its length-limit pass maps every
// array, limit or none); that copy is the SDK's.
const FINISH_REASON_LISTS = new Map<string, readonly string[]>();

/** The `gen_ai.response.finish_reasons` value of a Keel stop reason (one shared frozen array per reason). */
export function genAiFinishReasons(stopReason: string): readonly string[] {
  let list = FINISH_REASON_LISTS.get(stopReason);
  if (list === undefined) {
    list = Object.freeze([genAiFinishReason(stopReason)]);
    // Bounded: providers' stop reasons are a short list, but a misbehaving one must not grow this forever.
    if (FINISH_REASON_LISTS.size < 64) FINISH_REASON_LISTS.set(stopReason, list);
  }
  return list;
}

/** Where numeric attributes can be set one at a time: a span. */
export interface AttributeSink {
  setAttribute(key: string, value: number): unknown;
}

/**
 * A model call's token counts as usage attributes set on `sink`; the optional counts only when the provider
 * reported them. Set one by one on the span rather than gathered in an object first: the SDK copies and checks
 * an object's entries one by one anyway, so the object would only be one more allocation per call.
 */
export function setModelUsageAttributes(sink: AttributeSink, usage: ModelUsage): void {
  sink.setAttribute(GEN_AI.INPUT_TOKENS, usage.inputTokens);
  sink.setAttribute(GEN_AI.OUTPUT_TOKENS, usage.outputTokens);
  if (usage.cacheReadTokens !== undefined)
    sink.setAttribute(GEN_AI.CACHE_READ_INPUT_TOKENS, usage.cacheReadTokens);
  if (usage.cacheCreationTokens !== undefined)
    sink.setAttribute(GEN_AI.CACHE_CREATION_INPUT_TOKENS, usage.cacheCreationTokens);
  if (usage.reasoningTokens !== undefined)
    sink.setAttribute(GEN_AI.REASONING_OUTPUT_TOKENS, usage.reasoningTokens);
}

/** A run's totals as usage attributes of its `invoke_agent` span, with its cost when the price is known. */
export function runUsageAttributes(usage: RunUsage, into: SpanAttributes): void {
  into[GEN_AI.INPUT_TOKENS] = usage.inputTokens;
  into[GEN_AI.OUTPUT_TOKENS] = usage.outputTokens;
  if (usage.inputTokensCached > 0) into[GEN_AI.CACHE_READ_INPUT_TOKENS] = usage.inputTokensCached;
  if (usage.inputTokensCacheCreation > 0)
    into[GEN_AI.CACHE_CREATION_INPUT_TOKENS] = usage.inputTokensCacheCreation;
  if (usage.reasoningTokens > 0) into[GEN_AI.REASONING_OUTPUT_TOKENS] = usage.reasoningTokens;
  into["keel.usage.llm_calls"] = usage.llmCalls;
  into["keel.usage.tool_calls"] = usage.toolCalls;
  if (usage.costUsd !== null) into["keel.usage.cost_usd"] = usage.costUsd;
}

/** A value as the text of a content attribute: strings as they are, anything else as JSON. */
export function contentText(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
