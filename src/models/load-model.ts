import type { LLMOptions } from "../config/app-config-schema.js";
import { isLanguageModel, type LanguageModel } from "../contracts/language-model.js";
import {
  type CreatedModel,
  type CreateModelEnvironment,
  createdFromReadyModel,
  createEchoModel,
  namesEchoModel,
} from "./created-model.js";

/**
 * The model an agent's `llm` names, exactly as `createModel` builds it. The HTTP, host and scripted providers
 * are imported on first use: an agent on a ready model or the offline echo model loads none of their code.
 */
export async function loadModel(
  llm: LLMOptions | LanguageModel | undefined,
  environment: CreateModelEnvironment = {},
): Promise<CreatedModel> {
  if (isLanguageModel(llm)) return createdFromReadyModel(llm);
  if (namesEchoModel(llm)) return createEchoModel(llm);
  const { createModel } = await import("./create-model.js");
  return createModel(llm, environment);
}
