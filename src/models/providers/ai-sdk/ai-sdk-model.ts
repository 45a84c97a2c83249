import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV3,
  LanguageModelV3CallOptions,
} from "@ai-sdk/provider";
import type { LLMRetryOptions } from "../../../config/app-config-schema.js";
import {
  approximateTokens,
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStreamPart,
} from "../../../contracts/language-model.js";
import { ConfigError } from "../../../errors/error-classes.js";
import { getLogger } from "../../../logging/logger.js";
import { type ModelClock, systemClock } from "../../http/model-clock.js";
import { retryModelStream } from "../../http/retry-model-stream.js";
import { type RetryPolicy, resolveRetryPolicy } from "../../http/retry-policy.js";
import { classifyAiSdkError } from "./ai-sdk-error.js";
import { AiSdkPartConverter, type AiSdkStreamPart } from "./from-ai-sdk-parts.js";
import { type AiSdkCallSettings, toAiSdkCallOptions } from "./to-ai-sdk-call.js";

/** An AI SDK language model of a specification version the adapter speaks. */
export type AiSdkLanguageModel = LanguageModelV2 | LanguageModelV3;

export interface AiSdkModelOptions extends AiSdkCallSettings {
  /** The model id Keel reports and prices by; defaults to the AI SDK model's `modelId`. */
  modelId?: string;
  /** The provider name Keel reports; defaults to the AI SDK model's `provider` (`"openai.chat"`, …). */
  provider?: string;
  /** `"stream"` (default) calls `doStream`; `"generate"` calls `doGenerate` and replays its result as parts. */
  mode?: "stream" | "generate";
  /**
   * Keel's retry policy (the `llm.retry` options, snake_case as in a config):
   * rate limits, server errors (5xx) and connection failures before the first part are retried with backoff,
   * `Retry-After` as a floor. An AI SDK model's `doStream` does not retry by itself.
   */
  retry?: Partial<LLMRetryOptions>;
  /** The clock retries wait on (tests pass a fake one). */
  clock?: ModelClock;
}

const SUPPORTED_VERSIONS = new Set(["v2", "v3"]);

/**
 * Any Vercel AI SDK language model (`@ai-sdk/provider` specification v2 or v3, as `@ai-sdk/openai`,
 * `@ai-sdk/anthropic`, `@ai-sdk/google`, `@ai-sdk/openai-compatible` and the rest create) as a Keel model.
 * `@ai-sdk/provider` is needed for its types only: nothing of the AI SDK is loaded at run time.
 *
 * @example
 * import { openai } from "@ai-sdk/openai";
 * const runtime = await Runtime.fromDict({
 *   agents: [{ id: "helper", name: "Helper", llm: fromAiSdk(openai("gpt-4o-mini"), { temperature: 0 }), tools }],
 * });
 */
export function fromAiSdk(model: AiSdkLanguageModel, options: AiSdkModelOptions = {}): LanguageModel {
  return new AiSdkModel(model, options);
}

class AiSdkModel implements LanguageModel {
  readonly specificationVersion = MODEL_SPECIFICATION_VERSION;
  readonly provider: string;
  readonly modelId: string;
  private readonly settings: AiSdkCallSettings;
  private readonly mode: "stream" | "generate";
  private readonly policy: RetryPolicy;
  private readonly clock: ModelClock;

  constructor(
    private readonly model: AiSdkLanguageModel,
    options: AiSdkModelOptions,
  ) {
    const version = (model as { specificationVersion?: unknown } | null)?.specificationVersion;
    if (typeof version !== "string" || !SUPPORTED_VERSIONS.has(version)) {
      throw new ConfigError(
        `fromAiSdk() takes an AI SDK language model of specification v2 or v3; this one is ${
          typeof version === "string" ? version : "not an AI SDK language model"
        }`,
        {
          hint: "Pass the model a provider creates (openai('gpt-4o-mini'), anthropic('claude-…')) from an AI SDK 5 or 6 provider package",
        },
      );
    }
    const { modelId, provider, mode, retry, clock, ...settings } = options;
    this.policy = resolveRetryPolicy(retry);
    this.clock = clock ?? systemClock;
    this.provider = provider ?? model.provider;
    this.modelId = modelId ?? model.modelId;
    this.mode = mode ?? "stream";
    this.settings = settings;
  }

  stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    return retryModelStream({
      policy: this.policy,
      clock: this.clock,
      signal: request.signal,
      provider: this.provider,
      attempt: () => this.attempt(request),
    });
  }

  /** One call of the AI SDK model, as Keel parts; failures become one typed `error` part. */
  private async *attempt(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const converter = new AiSdkPartConverter(this.provider);
    // What the call options hold is the same in v2 and v3: text, file, reasoning and tool-call parts, text and
    // error-text tool results, function tools only.
    const call = toAiSdkCallOptions(request, this.settings) as LanguageModelV2CallOptions &
      LanguageModelV3CallOptions;
    try {
      if (this.mode === "generate") {
        yield* converter.convertGenerated(await this.model.doGenerate(call));
        return;
      }
      const { stream } = await this.model.doStream(call);
      yield* this.readStream(stream as ReadableStream<AiSdkStreamPart>, converter);
    } catch (error) {
      // An abort the caller asked for is theirs to handle; anything else becomes a typed error part.
      if (request.signal?.aborted) throw error;
      const { error: keelError, errorType } = classifyAiSdkError(error, this.provider);
      yield { type: "error", error: keelError, errorType };
    } finally {
      if (converter.warnings.length > 0) {
        getLogger().debug(`${this.provider} ${this.modelId} warned about the call`, {
          warnings: converter.warnings,
        });
      }
    }
  }

  countTokens(text: string): number {
    return approximateTokens(text);
  }

  /** The stream's parts converted; stops at an error part, and cancels the stream if the reader leaves early. */
  private async *readStream(
    stream: ReadableStream<AiSdkStreamPart>,
    converter: AiSdkPartConverter,
  ): AsyncGenerator<ModelStreamPart> {
    const reader = stream.getReader();
    let open = true;
    try {
      let finished = false;
      while (true) {
        const next = await reader.read();
        if (next.done) {
          open = false;
          break;
        }
        if (next.value.type === "finish") finished = true;
        for (const part of converter.convert(next.value)) {
          yield part;
          if (part.type === "error") return;
        }
      }
      if (!finished) yield* converter.flush();
    } finally {
      if (open) reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  }
}
