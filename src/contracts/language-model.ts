import type { KeelError } from "../errors/keel-error.js";
import type { Message, ReasoningPart, TextPart } from "./message.js";

/** Version tag of the model seam; a provider built for another version is refused at load. */
export const MODEL_SPECIFICATION_VERSION = "keel.model.v1" as const;

export interface ModelToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  inputSchema: Record<string, unknown>;
  /** Provider-specific extras passed through (e.g. Anthropic `cache_control`). */
  providerOptions?: Record<string, unknown>;
}

export interface ModelOutputSchema {
  name: string;
  schema: Record<string, unknown>;
}

export interface ModelCallOptions {
  temperature?: number;
  maxTokens?: number;
  /** Provider pass-through keys (`seed`, `top_p`, `parallel_tool_calls`, …). */
  [key: string]: unknown;
}

export interface ModelRequest {
  system?: string | TextPart[];
  /** The transcript. Providers must treat it as read-only: it is the run's own array. */
  messages: readonly Message[];
  tools?: readonly ModelToolSpec[];
  toolChoice?: "auto" | "none" | "required" | { type: "tool"; name: string };
  outputSchema?: ModelOutputSchema;
  options: ModelCallOptions;
  /** Values for the model client only (`clientKwargs`). */
  clientKwargs?: Record<string, unknown>;
  signal?: AbortSignal;
}

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens?: number;
  /** Input tokens read from the provider's prompt cache. */
  cacheReadTokens?: number;
  /** Input tokens written to the provider's prompt cache. */
  cacheCreationTokens?: number;
  /** Reasoning tokens; reported separately and not added to `outputTokens`. */
  reasoningTokens?: number;
}

export type ModelStopReason =
  | "end_turn"
  | "tool_use"
  | "max_tokens"
  | "stop_sequence"
  | "content_filter"
  | "unknown";

export type ModelErrorType = "rate_limit" | "connection" | "response" | "unknown";

export type ModelStreamPart =
  | { type: "text-delta"; text: string }
  | { type: "reasoning-delta"; text: string }
  | { type: "reasoning"; reasoning: ReasoningPart }
  | { type: "tool-call-delta"; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: "tool-call"; id: string; name: string; arguments: string | Record<string, unknown> }
  | { type: "usage"; usage: ModelUsage }
  | { type: "finish"; stopReason: ModelStopReason; model?: string; responseId?: string }
  | { type: "error"; error: KeelError; errorType: ModelErrorType };

/** The model seam: one streaming call. Every provider, the mock included, implements it. */
export interface LanguageModel {
  readonly specificationVersion: typeof MODEL_SPECIFICATION_VERSION;
  readonly provider: string;
  readonly modelId: string;
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart>;
  /** Approximate token count, used for cost projection and token-bounded context. */
  countTokens?(text: string): number;
  close?(): Promise<void>;
}

export function isLanguageModel(value: unknown): value is LanguageModel {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as LanguageModel).specificationVersion === MODEL_SPECIFICATION_VERSION &&
    typeof (value as LanguageModel).stream === "function"
  );
}

/** Roughly four characters a token; the fallback when a provider has no tokenizer. */
export function approximateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}
