import type { LLMOptions } from "../config/app-config-schema.js";
import { isLanguageModel, type LanguageModel } from "../contracts/language-model.js";
import { ConfigError } from "../errors/error-classes.js";
import {
  type CreatedModel,
  type CreateModelEnvironment,
  createdFromReadyModel,
  createdModel,
  createEchoModel,
  withModelId,
} from "./created-model.js";
import { loadApiKey } from "./http/load-api-key.js";
import { AnthropicModel } from "./providers/anthropic/anthropic-model.js";
import { HostModel } from "./providers/host/host-model.js";
import { ScriptedModel } from "./providers/mock/scripted-model.js";
import { OpenAICompatibleModel } from "./providers/openai/openai-compatible-model.js";

export type { CreatedModel, CreateModelEnvironment } from "./created-model.js";

/** The vendors' default key variables. */
export const DEFAULT_API_KEY_ENV = {
  anthropic: "ANTHROPIC_API_KEY",
  openai_compatible: "OPENAI_API_KEY",
} as const;

/**
 * The model an agent's `llm` names; no `llm` means the offline mock. A ready model passes through. An
 * HTTP provider reads its API key here, when the agent loads, so a missing key fails before any request with a
 * `ConfigError` naming the variable.
 */
export function createModel(
  llm: LLMOptions | LanguageModel | undefined,
  environment: CreateModelEnvironment = {},
): CreatedModel {
  if (isLanguageModel(llm)) return createdFromReadyModel(llm);
  const provider = llm?.provider ?? "mock";
  let model: LanguageModel;
  switch (provider) {
    case "mock":
      if (!llm?.script) return createEchoModel(llm);
      model = new ScriptedModel(llm.script, withModelId(llm.model));
      break;
    case "anthropic":
    case "openai_compatible":
      model = httpModel(provider, llm!, environment);
      break;
    case "host":
      model = new HostModel(llm?.model);
      break;
    default:
      throw new ConfigError(`llm.provider "${provider}" is not available in this build of Keel`, {
        hint: 'Use provider "mock", "anthropic" or "openai_compatible", or pass any LanguageModel object as the agent\'s llm in code',
      });
  }
  return createdModel(model, llm);
}

/** An HTTP provider's model, its key read now from `api_key_env` or the vendor's default variable. */
function httpModel(
  provider: "anthropic" | "openai_compatible",
  llm: LLMOptions,
  environment: CreateModelEnvironment,
): LanguageModel {
  const keyVariable = llm.api_key_env ?? DEFAULT_API_KEY_ENV[provider];
  const common = {
    apiKey: loadApiKey({ variable: keyVariable, provider, ...withEnv(environment.env) }),
    keyVariable,
    ...withModelId(llm.model),
    streamEndpoint: llm.stream_endpoint,
    maxTokens: llm.max_tokens,
    timeoutMs: llm.timeout_ms,
    retry: llm.retry,
    extraHeaders: llm.extra_headers,
    clock: environment.clock,
  };
  if (provider === "anthropic") {
    return new AnthropicModel({ ...common, ...(llm.api_base ? { apiBase: llm.api_base } : {}) });
  }
  return new OpenAICompatibleModel({
    ...common,
    apiBase: llm.api_base ?? "",
    apiStyle: llm.openai_api_style,
    reasoningModel: llm.reasoning_model,
  });
}

function withEnv(env: Readonly<Record<string, string | undefined>> | undefined): {
  env?: Readonly<Record<string, string | undefined>>;
} {
  return env === undefined ? {} : { env };
}
