import type { LLMOptions } from "../config/app-config-schema.js";
import type { LanguageModel, ModelCallOptions } from "../contracts/language-model.js";
import type { ModelClock } from "./http/model-clock.js";
import { type ModelPricing, resolvePricing } from "./pricing.js";
import { EchoModel } from "./providers/mock/echo-model.js";

/** Keys of `llm` that configure Keel rather than the provider request. */
const KEEL_KEYS = new Set([
  "provider",
  "model",
  "api_base",
  "api_key_env",
  "temperature",
  "max_tokens",
  "timeout_ms",
  "stream_endpoint",
  "pricing",
  "retry",
  "extra_headers",
  "reasoning_model",
  "openai_api_style",
  "script",
]);

export interface CreatedModel {
  model: LanguageModel;
  options: ModelCallOptions;
  pricing: ModelPricing;
}

/** Where HTTP providers read their API keys and keep time; tests pass their own. */
export interface CreateModelEnvironment {
  /** Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  clock?: ModelClock;
}

/** A ready model as an agent's `llm`: used as is, priced by its id and provider. */
export function createdFromReadyModel(llm: LanguageModel): CreatedModel {
  return { model: llm, options: {}, pricing: resolvePricing(llm.modelId, undefined, llm.provider) };
}

/** Whether `llm` names the offline echo model: no `llm`, or the mock provider without a script. */
export function namesEchoModel(llm: LLMOptions | undefined): boolean {
  return (llm?.provider ?? "mock") === "mock" && !llm?.script;
}

/** The offline echo model an `llm` of the mock provider without a script names. */
export function createEchoModel(llm: LLMOptions | undefined): CreatedModel {
  return createdModel(new EchoModel(withModelId(llm?.model)), llm);
}

/** A model built from an `llm`, with the call options and pricing that `llm` gives it. */
export function createdModel(model: LanguageModel, llm: LLMOptions | undefined): CreatedModel {
  return {
    model,
    options: callOptionsOf(llm),
    pricing: resolvePricing(model.modelId, llm?.pricing, model.provider),
  };
}

/** The options an `llm` adds to every call: temperature, max tokens, and every key Keel does not read itself. */
function callOptionsOf(llm: LLMOptions | undefined): ModelCallOptions {
  const options: ModelCallOptions = {};
  if (llm?.temperature !== undefined) options.temperature = llm.temperature;
  if (llm?.max_tokens !== undefined) options.maxTokens = llm.max_tokens;
  if (llm) for (const [key, value] of Object.entries(llm)) if (!KEEL_KEYS.has(key)) options[key] = value;
  return options;
}

export function withModelId(modelId: string | undefined): { modelId?: string } {
  return modelId === undefined ? {} : { modelId };
}
