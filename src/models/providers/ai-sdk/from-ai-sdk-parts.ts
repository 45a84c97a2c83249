import type {
  LanguageModelV2Content,
  LanguageModelV2FinishReason,
  LanguageModelV2StreamPart,
  LanguageModelV2Usage,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import type { ModelStopReason, ModelStreamPart, ModelUsage } from "../../../contracts/language-model.js";
import type { ReasoningPart } from "../../../contracts/message.js";
import { classifyAiSdkError } from "./ai-sdk-error.js";

export type AiSdkStreamPart = LanguageModelV2StreamPart | LanguageModelV3StreamPart;
export type AiSdkUsage = LanguageModelV2Usage | LanguageModelV3Usage;
export type AiSdkFinishReason = LanguageModelV2FinishReason | LanguageModelV3FinishReason;
export type AiSdkContent = LanguageModelV2Content | LanguageModelV3Content;

type ProviderMetadata = Record<string, Record<string, unknown> | undefined> | undefined;

interface PendingReasoning {
  text: string;
  signature?: string;
  redactedData?: string;
}

interface PendingToolInput {
  name: string;
  text: string;
  textEncoded: boolean;
  providerExecuted: boolean;
}

/**
 * Turns an AI SDK model's stream parts (specification v2 or v3) into Keel's, one part at a time:
 * - `text-delta` → `text-delta`; `reasoning-delta` → `reasoning-delta` as it comes, and each reasoning block
 *   once it ends → a `reasoning` part that keeps the Anthropic signature or redacted data for replay;
 * - `tool-input-start/delta/end` are buffered and the complete `tool-call` (its JSON text, parsed by the loop,
 *   which keeps malformed arguments as the call's `argumentsError`) is what Keel gets. The loop assembles
 *   `tool-call-delta`s and `tool-call`s alike, so passing both on would run each call twice; and a v3 input
 *   streamed as text is not the call's JSON. A tool input that ends without a `tool-call` (a cut-off stream)
 *   becomes a call with the text received, for the loop to report as malformed;
 * - tool calls and results the provider executed itself are not Keel's to run and are skipped;
 * - `finish` → `usage` (v2 or v3 shape) then `finish` with the stop reason, the response's model and id;
 * - `error` → an `error` part with the typed error (see `classifyAiSdkError`); the reader stops there.
 */
export class AiSdkPartConverter {
  /** Warnings the provider reported at `stream-start` (unsupported settings, tools…). */
  readonly warnings: unknown[] = [];
  private readonly reasoning = new Map<string, PendingReasoning>();
  private readonly toolInputs = new Map<string, PendingToolInput>();
  private model: string | undefined;
  private responseId: string | undefined;

  constructor(private readonly provider: string) {}

  *convert(part: AiSdkStreamPart): Generator<ModelStreamPart> {
    switch (part.type) {
      case "text-delta":
        if (part.delta !== "") yield { type: "text-delta", text: part.delta };
        break;
      case "reasoning-start":
        this.reasoningBlock(part.id, part.providerMetadata);
        break;
      case "reasoning-delta": {
        const block = this.reasoningBlock(part.id, part.providerMetadata);
        if (part.delta !== "") {
          block.text += part.delta;
          yield { type: "reasoning-delta", text: part.delta };
        }
        break;
      }
      case "reasoning-end": {
        const block = this.reasoningBlock(part.id, part.providerMetadata);
        this.reasoning.delete(part.id);
        yield { type: "reasoning", reasoning: toReasoningPart(block) };
        break;
      }
      case "tool-input-start":
        this.toolInputs.set(part.id, {
          name: part.toolName,
          text: "",
          textEncoded: "inputEncoding" in part && part.inputEncoding === "text",
          providerExecuted: part.providerExecuted === true,
        });
        break;
      case "tool-input-delta": {
        const input = this.toolInputs.get(part.id);
        if (input !== undefined) input.text += part.delta;
        break;
      }
      case "tool-call":
        this.toolInputs.delete(part.toolCallId);
        if (part.providerExecuted !== true) {
          yield { type: "tool-call", id: part.toolCallId, name: part.toolName, arguments: part.input };
        }
        break;
      case "response-metadata":
        if (part.modelId !== undefined) this.model = part.modelId;
        if (part.id !== undefined) this.responseId = part.id;
        break;
      case "stream-start":
        this.warnings.push(...part.warnings);
        break;
      case "finish":
        yield* this.flush();
        yield { type: "usage", usage: toKeelUsage(part.usage) };
        yield this.finishPart(part.finishReason);
        break;
      case "error": {
        const { error, errorType } = classifyAiSdkError(part.error, this.provider);
        yield { type: "error", error, errorType };
        break;
      }
      // text-start/-end, tool-input-end, tool results, approvals, files, sources and raw chunks carry nothing
      // Keel's seam takes.
    }
  }

  /** What is still open when the stream ends without its `finish` part. */
  *flush(): Generator<ModelStreamPart> {
    for (const block of this.reasoning.values())
      yield { type: "reasoning", reasoning: toReasoningPart(block) };
    this.reasoning.clear();
    for (const [id, input] of this.toolInputs) {
      if (input.providerExecuted) continue;
      yield {
        type: "tool-call",
        id,
        name: input.name,
        arguments: input.textEncoded ? JSON.stringify(input.text) : input.text,
      };
    }
    this.toolInputs.clear();
  }

  /** The parts of a `doGenerate` result, in the order a stream would have given them. */
  *convertGenerated(result: {
    content: readonly AiSdkContent[];
    finishReason: AiSdkFinishReason;
    usage: AiSdkUsage;
    response?: { id?: string; modelId?: string };
    warnings?: readonly unknown[];
  }): Generator<ModelStreamPart> {
    if (result.warnings) this.warnings.push(...result.warnings);
    if (result.response?.modelId !== undefined) this.model = result.response.modelId;
    if (result.response?.id !== undefined) this.responseId = result.response.id;
    for (const content of result.content) {
      switch (content.type) {
        case "text":
          if (content.text !== "") yield { type: "text-delta", text: content.text };
          break;
        case "reasoning": {
          const block: PendingReasoning = { text: content.text };
          readReasoningMetadata(block, content.providerMetadata);
          yield { type: "reasoning", reasoning: toReasoningPart(block) };
          break;
        }
        case "tool-call":
          if (content.providerExecuted !== true) {
            yield {
              type: "tool-call",
              id: content.toolCallId,
              name: content.toolName,
              arguments: content.input,
            };
          }
          break;
      }
    }
    yield { type: "usage", usage: toKeelUsage(result.usage) };
    yield this.finishPart(result.finishReason);
  }

  private finishPart(reason: AiSdkFinishReason): ModelStreamPart {
    const finish: Extract<ModelStreamPart, { type: "finish" }> = {
      type: "finish",
      stopReason: toStopReason(reason),
    };
    if (this.model !== undefined) finish.model = this.model;
    if (this.responseId !== undefined) finish.responseId = this.responseId;
    return finish;
  }

  private reasoningBlock(id: string, metadata: ProviderMetadata): PendingReasoning {
    let block = this.reasoning.get(id);
    if (block === undefined) {
      block = { text: "" };
      this.reasoning.set(id, block);
    }
    readReasoningMetadata(block, metadata);
    return block;
  }
}

/** The AI SDK's Anthropic provider sends a thinking block's signature and a redacted block's data here. */
function readReasoningMetadata(block: PendingReasoning, metadata: ProviderMetadata): void {
  const anthropic = metadata?.anthropic;
  if (anthropic === undefined) return;
  if (typeof anthropic.signature === "string") block.signature = anthropic.signature;
  if (typeof anthropic.redactedData === "string") block.redactedData = anthropic.redactedData;
}

function toReasoningPart(block: PendingReasoning): ReasoningPart {
  const part: ReasoningPart = { type: "reasoning", text: block.text };
  if (block.signature !== undefined) part.signature = block.signature;
  if (block.redactedData !== undefined) part.redactedData = block.redactedData;
  return part;
}

/**
 * AI SDK usage as Keel's. v3 reports input as `{total, noCache, cacheRead, cacheWrite}` and output as
 * `{total, text, reasoning}`; v2 as flat numbers with `cachedInputTokens` and `reasoningTokens`. Keel's input
 * count includes cache reads and writes (pricing charges the rest as plain input), and its output count is the
 * provider's total, reasoning included; `reasoningTokens` says how much of it was reasoning.
 */
export function toKeelUsage(usage: AiSdkUsage): ModelUsage {
  if (typeof usage.inputTokens === "object" || typeof usage.outputTokens === "object") {
    const v3 = usage as LanguageModelV3Usage;
    const input = v3.inputTokens ?? {
      total: undefined,
      noCache: undefined,
      cacheRead: undefined,
      cacheWrite: undefined,
    };
    const output = v3.outputTokens ?? { total: undefined, text: undefined, reasoning: undefined };
    const inputTokens =
      input.total ?? (input.noCache ?? 0) + (input.cacheRead ?? 0) + (input.cacheWrite ?? 0);
    const outputTokens = output.total ?? (output.text ?? 0) + (output.reasoning ?? 0);
    const keel: ModelUsage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
    if (input.cacheRead !== undefined) keel.cacheReadTokens = input.cacheRead;
    if (input.cacheWrite !== undefined) keel.cacheCreationTokens = input.cacheWrite;
    if (output.reasoning !== undefined) keel.reasoningTokens = output.reasoning;
    return keel;
  }
  const v2 = usage as LanguageModelV2Usage;
  const inputTokens = v2.inputTokens ?? 0;
  const outputTokens = v2.outputTokens ?? 0;
  const keel: ModelUsage = {
    inputTokens,
    outputTokens,
    totalTokens: v2.totalTokens ?? inputTokens + outputTokens,
  };
  if (v2.cachedInputTokens !== undefined) keel.cacheReadTokens = v2.cachedInputTokens;
  if (v2.reasoningTokens !== undefined) keel.reasoningTokens = v2.reasoningTokens;
  return keel;
}

/** v2's finish reason is a string; v3's is `{unified, raw}`, whose raw value tells a stop sequence apart. */
export function toStopReason(reason: AiSdkFinishReason): ModelStopReason {
  const unified = typeof reason === "string" ? reason : reason.unified;
  switch (unified) {
    case "stop":
      return typeof reason === "object" && reason.raw === "stop_sequence" ? "stop_sequence" : "end_turn";
    case "length":
      return "max_tokens";
    case "tool-calls":
      return "tool_use";
    case "content-filter":
      return "content_filter";
    default:
      return "unknown";
  }
}
