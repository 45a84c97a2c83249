import type {
  JSONObject,
  JSONValue,
  LanguageModelV3CallOptions,
  LanguageModelV3FilePart,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3TextPart,
  LanguageModelV3ToolChoice,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import type { ModelCallOptions, ModelRequest, ModelToolSpec } from "../../../contracts/language-model.js";
import type {
  AssistantMessage,
  ImagePart,
  Message,
  ReasoningPart,
  TextPart,
} from "../../../contracts/message.js";

/**
 * Call settings of an AI SDK model: defaults given to `fromAiSdk`, overridden by each request's options.
 * Field names are the AI SDK's (`LanguageModelV3CallOptions`).
 */
export interface AiSdkCallSettings {
  temperature?: number;
  maxOutputTokens?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  stopSequences?: string[];
  /** Passed to the provider as is, keyed by provider name: `{ openai: { reasoningEffort: "low" } }`. */
  providerOptions?: Record<string, Record<string, JSONValue>>;
  /** Added to the provider's HTTP request. */
  headers?: Record<string, string>;
}

/**
 * The AI SDK call options for a Keel request: the prompt, function tools, tool choice, output schema as a JSON
 * response format, settings and the abort signal. The parts built are common to specification v2 and v3.
 */
export function toAiSdkCallOptions(
  request: ModelRequest,
  defaults: AiSdkCallSettings,
): LanguageModelV3CallOptions {
  const settings = mergeSettings(defaults, settingsFromOptions(request.options), clientSettings(request));
  const call: LanguageModelV3CallOptions = { prompt: toAiSdkPrompt(request.system, request.messages) };
  if (settings.temperature !== undefined) call.temperature = settings.temperature;
  if (settings.maxOutputTokens !== undefined) call.maxOutputTokens = settings.maxOutputTokens;
  if (settings.topP !== undefined) call.topP = settings.topP;
  if (settings.topK !== undefined) call.topK = settings.topK;
  if (settings.seed !== undefined) call.seed = settings.seed;
  if (settings.presencePenalty !== undefined) call.presencePenalty = settings.presencePenalty;
  if (settings.frequencyPenalty !== undefined) call.frequencyPenalty = settings.frequencyPenalty;
  if (settings.stopSequences !== undefined) call.stopSequences = settings.stopSequences;
  if (settings.providerOptions !== undefined) call.providerOptions = settings.providerOptions;
  if (settings.headers !== undefined) call.headers = settings.headers;
  if (request.tools !== undefined && request.tools.length > 0) call.tools = request.tools.map(toFunctionTool);
  if (request.toolChoice !== undefined) call.toolChoice = toToolChoice(request.toolChoice);
  if (request.outputSchema !== undefined) {
    call.responseFormat = {
      type: "json",
      schema: request.outputSchema.schema,
      name: request.outputSchema.name,
    };
  }
  if (request.signal !== undefined) call.abortSignal = request.signal;
  return call;
}

// ── prompt ────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * Keel's transcript as an AI SDK prompt. System text parts become one system message each (so a part's
 * `cacheControl` can travel as `providerOptions.anthropic.cacheControl`); consecutive tool results become one
 * `tool` message, as the AI SDK groups them; an assistant turn is its reasoning, text, then tool calls.
 */
export function toAiSdkPrompt(
  system: ModelRequest["system"],
  messages: readonly Message[],
): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [];
  if (system !== undefined) pushSystem(prompt, system);
  let toolMessage: { role: "tool"; content: LanguageModelV3ToolResultPart[] } | null = null;
  for (const message of messages) {
    if (message.role !== "tool") toolMessage = null;
    switch (message.role) {
      case "system":
        pushSystem(prompt, message.content);
        break;
      case "user":
        prompt.push({
          role: "user",
          content:
            typeof message.content === "string"
              ? [{ type: "text", text: message.content }]
              : message.content.map((part) => (part.type === "text" ? toTextPart(part) : toFilePart(part))),
        });
        break;
      case "assistant":
        prompt.push(toAssistantMessage(message));
        break;
      case "tool": {
        const part: LanguageModelV3ToolResultPart = {
          type: "tool-result",
          toolCallId: message.toolCallId,
          toolName: message.toolName,
          output: message.isError
            ? { type: "error-text", value: message.content }
            : { type: "text", value: message.content },
        };
        if (toolMessage === null) {
          toolMessage = { role: "tool", content: [part] };
          prompt.push(toolMessage);
        } else {
          toolMessage.content.push(part);
        }
        break;
      }
    }
  }
  return prompt;
}

function pushSystem(prompt: LanguageModelV3Prompt, content: string | TextPart[]): void {
  if (typeof content === "string") {
    if (content !== "") prompt.push({ role: "system", content });
    return;
  }
  for (const part of content) {
    const message: LanguageModelV3Message = { role: "system", content: part.text };
    const providerOptions = cacheControlOptions(part.cacheControl);
    if (providerOptions !== undefined) message.providerOptions = providerOptions;
    prompt.push(message);
  }
}

function toTextPart(part: TextPart): LanguageModelV3TextPart {
  const text: LanguageModelV3TextPart = { type: "text", text: part.text };
  const providerOptions = cacheControlOptions(part.cacheControl);
  if (providerOptions !== undefined) text.providerOptions = providerOptions;
  return text;
}

/** An image as an AI SDK file part: an `http(s):` address as a URL, anything else as base64 data. */
function toFilePart(part: ImagePart): LanguageModelV3FilePart {
  if (/^https?:\/\//i.test(part.data) && URL.canParse(part.data)) {
    return { type: "file", data: new URL(part.data), mediaType: part.mediaType ?? "image/*" };
  }
  return { type: "file", data: part.data, mediaType: part.mediaType ?? sniffImageType(part.data) };
}

/** The media type of base64 image data from its first bytes; `image/*` when unknown. */
function sniffImageType(base64: string): string {
  if (base64.startsWith("iVBORw0KGgo")) return "image/png";
  if (base64.startsWith("/9j/")) return "image/jpeg";
  if (base64.startsWith("R0lGOD")) return "image/gif";
  if (base64.startsWith("UklGR")) return "image/webp";
  return "image/*";
}

function toAssistantMessage(message: AssistantMessage): LanguageModelV3Message {
  const content: Extract<LanguageModelV3Message, { role: "assistant" }>["content"] = [];
  for (const reasoning of message.reasoning ?? []) content.push(toReasoningPart(reasoning));
  if (message.content !== "") content.push({ type: "text", text: message.content });
  for (const call of message.toolCalls ?? []) {
    content.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.arguments });
  }
  return { role: "assistant", content };
}

/**
 * A kept reasoning block replayed: its signature and redacted data go back where the AI SDK's Anthropic
 * provider reads them (`providerOptions.anthropic`); other providers ignore them.
 */
function toReasoningPart(reasoning: ReasoningPart) {
  const part: { type: "reasoning"; text: string; providerOptions?: SharedV3ProviderOptions } = {
    type: "reasoning",
    text: reasoning.text,
  };
  const anthropic: JSONObject = {};
  if (reasoning.signature !== undefined) anthropic.signature = reasoning.signature;
  if (reasoning.redactedData !== undefined) anthropic.redactedData = reasoning.redactedData;
  if (Object.keys(anthropic).length > 0) part.providerOptions = { anthropic };
  return part;
}

function cacheControlOptions(
  cacheControl: Record<string, unknown> | undefined,
): SharedV3ProviderOptions | undefined {
  return cacheControl === undefined ? undefined : { anthropic: { cacheControl: cacheControl as JSONObject } };
}

// ── tools ─────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * A Keel tool spec as an AI SDK function tool. The spec's `providerOptions` are Keel's flat extras: a
 * `cache_control` (or `cacheControl`) goes to `anthropic.cacheControl`, and any key holding an object is taken
 * as the AI SDK's own per-provider options (`{ openai: { strict: true } }`).
 */
export function toFunctionTool(tool: ModelToolSpec): LanguageModelV3FunctionTool {
  const functionTool: LanguageModelV3FunctionTool = {
    type: "function",
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  };
  const extras = tool.providerOptions;
  if (extras !== undefined) {
    const providerOptions: Record<string, JSONObject> = {};
    for (const [key, value] of Object.entries(extras)) {
      if (key === "cache_control" || key === "cacheControl") {
        providerOptions.anthropic = { ...providerOptions.anthropic, cacheControl: value as JSONObject };
      } else if (isPlainObject(value)) {
        providerOptions[key] = { ...providerOptions[key], ...(value as JSONObject) };
      }
    }
    if (Object.keys(providerOptions).length > 0) functionTool.providerOptions = providerOptions;
  }
  return functionTool;
}

export function toToolChoice(choice: NonNullable<ModelRequest["toolChoice"]>): LanguageModelV3ToolChoice {
  return typeof choice === "string" ? { type: choice } : { type: "tool", toolName: choice.name };
}

// ── settings ──────────────────────────────────────────────────────────────────────────────────────────────

/** Keel option names (config spells them snake_case) and the AI SDK setting each one sets. */
const NUMBER_SETTINGS: readonly (readonly [keyof AiSdkCallSettings, readonly string[]])[] = [
  ["temperature", ["temperature"]],
  ["maxOutputTokens", ["maxOutputTokens", "maxTokens", "max_tokens", "max_output_tokens"]],
  ["topP", ["topP", "top_p"]],
  ["topK", ["topK", "top_k"]],
  ["seed", ["seed"]],
  ["presencePenalty", ["presencePenalty", "presence_penalty"]],
  ["frequencyPenalty", ["frequencyPenalty", "frequency_penalty"]],
];

/**
 * The AI SDK settings a request's options carry. Options the AI SDK has no field for (`parallel_tool_calls`)
 * are provider-specific there: set them through `providerOptions`.
 */
export function settingsFromOptions(options: ModelCallOptions): AiSdkCallSettings {
  const settings: AiSdkCallSettings = {};
  for (const [setting, keys] of NUMBER_SETTINGS) {
    for (const key of keys) {
      const value = options[key];
      if (typeof value === "number") {
        (settings as Record<string, unknown>)[setting] = value;
        break;
      }
    }
  }
  const stop = options.stopSequences ?? options.stop_sequences ?? options.stop;
  if (typeof stop === "string") settings.stopSequences = [stop];
  else if (Array.isArray(stop) && stop.every((item) => typeof item === "string"))
    settings.stopSequences = stop;
  return { ...settings, ...extras(options) };
}

/**
 * A run's `clientKwargs` (values for the model client only): `providerOptions` (`provider_options`),
 * and `extra_headers` (`extraHeaders`), as Keel's HTTP providers read them.
 */
function clientSettings(request: ModelRequest): AiSdkCallSettings {
  return request.clientKwargs === undefined ? {} : extras(request.clientKwargs);
}

function extras(values: Record<string, unknown>): AiSdkCallSettings {
  const settings: AiSdkCallSettings = {};
  const providerOptions = values.providerOptions ?? values.provider_options;
  if (isPlainObject(providerOptions)) {
    settings.providerOptions = providerOptions as AiSdkCallSettings["providerOptions"];
  }
  const headers = values.extra_headers ?? values.extraHeaders ?? values.headers;
  if (isPlainObject(headers)) {
    settings.headers = {};
    for (const [name, value] of Object.entries(headers))
      if (typeof value === "string") settings.headers[name] = value;
  }
  return settings;
}

/** Later settings win field by field; provider options merge per provider, headers per name. */
export function mergeSettings(...layers: AiSdkCallSettings[]): AiSdkCallSettings {
  const merged: AiSdkCallSettings = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer) as [keyof AiSdkCallSettings, unknown][]) {
      if (value === undefined) continue;
      if (key === "providerOptions") {
        const target: Record<string, Record<string, JSONValue>> = { ...merged.providerOptions };
        for (const [provider, options] of Object.entries(
          value as Record<string, Record<string, JSONValue>>,
        )) {
          target[provider] = { ...target[provider], ...options };
        }
        merged.providerOptions = target;
      } else if (key === "headers") {
        merged.headers = { ...merged.headers, ...(value as Record<string, string>) };
      } else {
        (merged as Record<string, unknown>)[key] = value;
      }
    }
  }
  return merged;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
