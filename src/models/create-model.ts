import type { LLMOptions } from "../config/app-config-schema.js";
import { ConfigError } from "../errors/error-classes.js";
import { isLanguageModel, type LanguageModel, type ModelCallOptions } from "./language-model.js";
import type { ModelPricing } from "./pricing.js";
import { resolvePricing } from "./pricing.js";
import { EchoModel } from "./providers/mock/echo-model.js";
import { ScriptedModel } from "./providers/mock/scripted-model.js";

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

/** The model an agent's `llm` names; no `llm` means the offline mock (LM-1). A ready model passes through. */
export function createModel(llm: LLMOptions | LanguageModel | undefined): CreatedModel {
  if (isLanguageModel(llm)) {
    return { model: llm, options: {}, pricing: resolvePricing(llm.modelId, undefined, llm.provider) };
  }
  const options: ModelCallOptions = {};
  if (llm?.temperature !== undefined) options.temperature = llm.temperature;
  if (llm?.max_tokens !== undefined) options.maxTokens = llm.max_tokens;
  if (llm) for (const [key, value] of Object.entries(llm)) if (!KEEL_KEYS.has(key)) options[key] = value;
  const provider = llm?.provider ?? "mock";
  let model: LanguageModel;
  switch (provider) {
    case "mock":
      model = llm?.script
        ? new ScriptedModel(llm.script, withModelId(llm.model))
        : new EchoModel(withModelId(llm?.model));
      break;
    default:
      throw new ConfigError(`llm.provider "${provider}" is not available in this build of Keel`, {
        hint: 'Use provider "mock", or pass any LanguageModel object as the agent\'s llm in code',
      });
  }
  return { model, options, pricing: resolvePricing(model.modelId, llm?.pricing, model.provider) };
}

function withModelId(modelId: string | undefined): { modelId?: string } {
  return modelId === undefined ? {} : { modelId };
}
