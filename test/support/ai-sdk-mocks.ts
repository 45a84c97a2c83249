import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV2StreamPart,
  LanguageModelV2Usage,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { simulateReadableStream } from "ai/test";
import type { LanguageModel, ModelRequest, ModelStreamPart } from "../../src/index.js";

type V2Generate = Awaited<ReturnType<LanguageModelV2["doGenerate"]>>;
type V2Stream = Awaited<ReturnType<LanguageModelV2["doStream"]>>;

/**
 * A specification-v2 language model that records its calls, the shape of `ai/test`'s `MockLanguageModelV2`
 * (AI SDK 5). AI SDK 6, the newest line that runs on Node 20, ships only `MockLanguageModelV3`; the object is
 * typed against `@ai-sdk/provider`'s own `LanguageModelV2`, so the compiler holds it to the v2 contract.
 */
export class MockLanguageModelV2 implements LanguageModelV2 {
  readonly specificationVersion = "v2";
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls = {};
  readonly doStreamCalls: LanguageModelV2CallOptions[] = [];
  readonly doGenerateCalls: LanguageModelV2CallOptions[] = [];
  private readonly streams: V2Stream[];
  private readonly generates: V2Generate[];

  constructor(options: {
    provider?: string;
    modelId?: string;
    doStream?: V2Stream[];
    doGenerate?: V2Generate[];
  }) {
    this.provider = options.provider ?? "mock-provider";
    this.modelId = options.modelId ?? "mock-model-id";
    this.streams = options.doStream ?? [];
    this.generates = options.doGenerate ?? [];
  }

  async doStream(options: LanguageModelV2CallOptions): Promise<V2Stream> {
    this.doStreamCalls.push(options);
    const result = this.streams[this.doStreamCalls.length - 1];
    if (result === undefined) throw new Error(`no stream for call ${this.doStreamCalls.length}`);
    return result;
  }

  async doGenerate(options: LanguageModelV2CallOptions): Promise<V2Generate> {
    this.doGenerateCalls.push(options);
    const result = this.generates[this.doGenerateCalls.length - 1];
    if (result === undefined) throw new Error(`no result for call ${this.doGenerateCalls.length}`);
    return result;
  }
}

/** A `doStream` result of v3 parts, streamed without delays. */
export function v3Stream(chunks: LanguageModelV3StreamPart[], chunkDelayInMs: number | null = null) {
  return { stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs }) };
}

/** A `doStream` result of v2 parts, streamed without delays. */
export function v2Stream(chunks: LanguageModelV2StreamPart[]) {
  return { stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null }) };
}

export function v3Usage(
  input: Partial<LanguageModelV3Usage["inputTokens"]>,
  output: Partial<LanguageModelV3Usage["outputTokens"]>,
): LanguageModelV3Usage {
  return {
    inputTokens: {
      total: undefined,
      noCache: undefined,
      cacheRead: undefined,
      cacheWrite: undefined,
      ...input,
    },
    outputTokens: { total: undefined, text: undefined, reasoning: undefined, ...output },
  };
}

export function v2Usage(usage: Partial<LanguageModelV2Usage>): LanguageModelV2Usage {
  return { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined, ...usage };
}

/** Every part of one call of a Keel model. */
export async function streamParts(
  model: LanguageModel,
  request: Partial<ModelRequest> = {},
): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of model.stream({
    messages: [{ role: "user", content: "hi" }],
    options: {},
    ...request,
  })) {
    parts.push(part);
  }
  return parts;
}
