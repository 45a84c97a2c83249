import type { LLMRetryOptions } from "../../../config/app-config-schema.js";
import {
  approximateTokens,
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStreamPart,
} from "../../../contracts/language-model.js";
import { ConfigError } from "../../../errors/error-classes.js";
import { registerHeaderSecrets, registerSecret } from "../../../logging/redact-secrets.js";
import { mergeHeaders } from "../../http/merge-headers.js";
import { type ModelClock, systemClock } from "../../http/model-clock.js";
import { parseServerSentEvents } from "../../http/parse-server-sent-events.js";
import { readClientKwargs } from "../../http/read-client-kwargs.js";
import { retryModelStream } from "../../http/retry-model-stream.js";
import { type RetryPolicy, resolveRetryPolicy } from "../../http/retry-policy.js";
import { sendModelRequest } from "../../http/send-model-request.js";
import { isReasoningModel } from "./is-reasoning-model.js";
import { readChatCompletion, readChatCompletionsStream } from "./read-chat-completions-stream.js";
import { readResponsesOutput } from "./read-responses-output.js";
import { type OpenAIRequestSettings, toChatCompletionsRequest } from "./to-chat-completions-request.js";
import { toResponsesRequest } from "./to-responses-request.js";

export type OpenAIApiStyle = "chat_completions" | "responses";

export interface OpenAICompatibleModelOptions {
  /** The server's base URL (`https://api.openai.com/v1`, `http://localhost:11434/v1`, …); required. */
  apiBase: string;
  /** Sent as `Authorization: Bearer …`. */
  apiKey: string;
  /** Default `gpt-4o-mini`. */
  modelId?: string;
  /** Default: `responses` when `apiBase` ends with `/responses`, else `chat_completions`. */
  apiStyle?: OpenAIApiStyle | undefined;
  /** True or false overrides the detection of reasoning models by id. */
  reasoningModel?: boolean | undefined;
  /** A full URL (or a path under `apiBase`) to send streamed Chat Completions calls to instead. */
  streamEndpoint?: string | undefined;
  /** `max_tokens` when a call gives none; none by default (the server decides). */
  maxTokens?: number | undefined;
  /** Limit on the wait for the first byte and on each silence in the stream; default 30000. */
  timeoutMs?: number | undefined;
  retry?: Partial<LLMRetryOptions> | undefined;
  /** Added to every request; a name here replaces Keel's header of that name. */
  extraHeaders?: Record<string, string> | undefined;
  /** The variable the key came from, named in the hint of a 401. */
  keyVariable?: string | undefined;
  clock?: ModelClock | undefined;
}

const PROVIDER = "OpenAI-compatible server";

/**
 * Any OpenAI-compatible server (OpenAI, vLLM, Ollama, LM Studio, gateways), by Chat Completions streamed over
 * SSE or by the Responses API in one call, with `llm.retry` retries and typed errors.
 */
export class OpenAICompatibleModel implements LanguageModel {
  readonly specificationVersion = MODEL_SPECIFICATION_VERSION;
  readonly provider = "openai_compatible";
  readonly modelId: string;
  readonly apiStyle: OpenAIApiStyle;
  private readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly policy: RetryPolicy;
  private readonly clock: ModelClock;
  private readonly settings: OpenAIRequestSettings;

  constructor(private readonly options: OpenAICompatibleModelOptions) {
    if (!options.apiBase) {
      throw new ConfigError('llm.api_base is required for provider "openai_compatible"', {
        hint: 'Set llm.api_base to the server\'s base URL, e.g. "https://api.openai.com/v1"',
      });
    }
    this.modelId = options.modelId ?? "gpt-4o-mini";
    const base = options.apiBase.replace(/\/+$/, "");
    this.apiStyle = options.apiStyle ?? (base.endsWith("/responses") ? "responses" : "chat_completions");
    this.url = endpoint(base, this.apiStyle, options.streamEndpoint);
    this.headers = mergeHeaders(
      { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      options.extraHeaders,
    );
    // Known from here on, so an error body that echoes the key is redacted wherever Keel writes it.
    registerSecret(options.apiKey);
    registerHeaderSecrets(options.extraHeaders);
    this.policy = resolveRetryPolicy(options.retry);
    this.clock = options.clock ?? systemClock;
    this.settings = {
      modelId: this.modelId,
      reasoning: isReasoningModel(this.modelId, options.reasoningModel),
      maxTokens: options.maxTokens,
    };
  }

  /** Whether calls are made as to a reasoning model (`max_completion_tokens`, no `temperature`). */
  get isReasoningModel(): boolean {
    return this.settings.reasoning;
  }

  stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const extras = readClientKwargs(request.clientKwargs);
    const responses = this.apiStyle === "responses";
    const body = {
      ...(responses
        ? toResponsesRequest(request, this.settings)
        : toChatCompletionsRequest(request, this.settings)),
      ...extras.body,
    };
    registerHeaderSecrets(extras.headers);
    const headers = mergeHeaders(this.headers, extras.headers);
    const signal = request.signal;
    const prepared: PreparedCall = { body, headers, signal, responses };
    return retryModelStream({
      policy: this.policy,
      clock: this.clock,
      signal,
      provider: PROVIDER,
      attempt: () => this.attempt(prepared),
    });
  }

  countTokens(text: string): number {
    return approximateTokens(text);
  }

  private async *attempt({
    body,
    headers,
    signal,
    responses,
  }: PreparedCall): AsyncGenerator<ModelStreamPart> {
    const response = await sendModelRequest({
      url: this.url,
      headers,
      body,
      timeoutMs: this.options.timeoutMs ?? 30_000,
      signal,
      provider: PROVIDER,
      keyVariable: this.options.keyVariable,
      clock: this.clock,
    });
    try {
      if (responses) {
        yield* readResponsesOutput(JSON.parse(await response.text()) as Record<string, unknown>, PROVIDER);
      } else if (response.headers.get("content-type")?.includes("application/json")) {
        yield* readChatCompletion(JSON.parse(await response.text()) as Record<string, unknown>, PROVIDER);
      } else {
        yield* readChatCompletionsStream(parseServerSentEvents(response.chunks()), PROVIDER);
      }
    } finally {
      response.close();
    }
  }
}

/** One model call as every attempt at it sends it; `responses` picks the Responses API over Chat Completions. */
interface PreparedCall {
  body: Record<string, unknown>;
  headers: Record<string, string>;
  signal: AbortSignal | undefined;
  responses: boolean;
}

function endpoint(base: string, style: OpenAIApiStyle, streamEndpoint: string | undefined): string {
  if (style === "chat_completions" && streamEndpoint !== undefined) {
    return /^https?:\/\//i.test(streamEndpoint)
      ? streamEndpoint
      : `${base}/${streamEndpoint.replace(/^\/+/, "")}`;
  }
  const path = style === "responses" ? "/responses" : "/chat/completions";
  return base.endsWith(path) ? base : `${base}${path}`;
}
