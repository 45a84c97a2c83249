/**
 * `keel/ai-sdk`: any Vercel AI SDK language model as a Keel model. An entry of its own because its declarations
 * name `@ai-sdk/provider`'s types, an optional peer: the root entry must type-check where it is not installed.
 */
export { type AiSdkLanguageModel, type AiSdkModelOptions, fromAiSdk } from "./ai-sdk-model.js";
export type { AiSdkCallSettings } from "./to-ai-sdk-call.js";
