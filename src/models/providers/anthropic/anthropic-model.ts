import type { LLMRetryOptions } from "../../../config/app-config-schema.js";
import {
  approximateTokens,
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStreamPart,
} from "../../../contracts/language-model.js";
import { registerHeaderSecrets, registerSecret } from "../../../logging/redact-secrets.js";
import { mergeHeaders } from "../../http/merge-headers.js";
import { type ModelClock, systemClock } from "../../http/model-clock.js";
import { parseServerSentEvents } from "../../http/parse-server-sent-events.js";
import { readClientKwargs } from "../../http/read-client-kwargs.js";
import { retryModelStream } from "../../http/retry-model-stream.js";
import { type RetryPolicy, resolveRetryPolicy } from "../../http/retry-policy.js";
import { sendModelRequest } from "../../http/send-model-request.js";
import { readAnthropicMessage } from "./read-anthropic-message.js";
import { readAnthropicStream } from "./read-anthropic-stream.js";
import { toAnthropicRequest } from "./to-anthropic-request.js";

export interface AnthropicModelOptions {
  apiKey: string;
  /** Default `claude-3-haiku-20240307`. */
  modelId?: string;
  /** Default `https://api.anthropic.com`; `/v1/messages` is added unless the URL already ends with it. */
  apiBase?: string;
  /** A full URL (or a path under `apiBase`) to send the streamed calls to instead. */
  streamEndpoint?: string;
  /** `max_tokens` when a call gives none; default 1024. */
  maxTokens?: number;
  /** Limit on the wait for the first byte and on each silence in the stream; default 30000. */
  timeoutMs?: number;
  retry?: Partial<LLMRetryOptions>;
  /** Added to every request; a name here replaces Keel's header of that name (`anthropic-version`, …). */
  extraHeaders?: Record<string, string>;
  /** The variable the key came from, named in the hint of a 401. */
  keyVariable?: string;
  /** Time for backoff; tests pass a fake one. */
  clock?: ModelClock;
}

export const ANTHROPIC_VERSION = "2023-06-01";

/** Anthropic's Messages API, streamed over SSE, with `llm.retry` retries and typed errors. */
export class AnthropicModel implements LanguageModel {
  readonly specificationVersion = MODEL_SPECIFICATION_VERSION;
  readonly provider = "anthropic";
  readonly modelId: string;
  private readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly policy: RetryPolicy;
  private readonly clock: ModelClock;

  constructor(private readonly options: AnthropicModelOptions) {
    this.modelId = options.modelId ?? "claude-3-haiku-20240307";
    this.url = messagesUrl(options.apiBase ?? "https://api.anthropic.com", options.streamEndpoint);
    this.headers = mergeHeaders(
      {
        "content-type": "application/json",
        "anthropic-version": ANTHROPIC_VERSION,
        "x-api-key": options.apiKey,
      },
      options.extraHeaders,
    );
    // Known from here on, so an error body that echoes the key is redacted wherever Keel writes it.
    registerSecret(options.apiKey);
    registerHeaderSecrets(options.extraHeaders);
    this.policy = resolveRetryPolicy(options.retry);
    this.clock = options.clock ?? systemClock;
  }

  stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const extras = readClientKwargs(request.clientKwargs);
    const body = {
      ...toAnthropicRequest(request, { modelId: this.modelId, maxTokens: this.options.maxTokens ?? 1024 }),
      ...extras.body,
    };
    registerHeaderSecrets(extras.headers);
    const headers = mergeHeaders(this.headers, extras.headers);
    const signal = request.signal;
    return retryModelStream({
      policy: this.policy,
      clock: this.clock,
      signal,
      provider: "Anthropic",
      attempt: () => this.attempt(body, headers, signal),
    });
  }

  countTokens(text: string): number {
    return approximateTokens(text);
  }

  private async *attempt(
    body: Record<string, unknown>,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<ModelStreamPart> {
    const response = await sendModelRequest({
      url: this.url,
      headers,
      body,
      timeoutMs: this.options.timeoutMs ?? 30_000,
      signal,
      provider: "Anthropic",
      keyVariable: this.options.keyVariable,
      clock: this.clock,
    });
    try {
      if (response.headers.get("content-type")?.includes("application/json")) {
        yield* readAnthropicMessage(JSON.parse(await response.text()) as Record<string, unknown>);
      } else {
        yield* readAnthropicStream(parseServerSentEvents(response.chunks()));
      }
    } finally {
      response.close();
    }
  }
}

/** The Messages endpoint under an API base given with or without `/v1` or `/v1/messages`. */
function messagesUrl(apiBase: string, streamEndpoint: string | undefined): string {
  const base = apiBase.replace(/\/+$/, "");
  if (streamEndpoint !== undefined) {
    return /^https?:\/\//i.test(streamEndpoint)
      ? streamEndpoint
      : `${base}/${streamEndpoint.replace(/^\/+/, "")}`;
  }
  if (/\/messages$/.test(base)) return base;
  if (/\/v1$/.test(base)) return `${base}/messages`;
  return `${base}/v1/messages`;
}
