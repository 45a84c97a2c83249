/**
 * Whether an OpenAI-compatible model is a reasoning model: `reasoning_model` decides when set (false
 * disables detection); otherwise ids `o<digits>` with an optional `-suffix` (o1, o3-mini, o4-mini-2025-04-16)
 * and `gpt-5-thinking…` are, also behind a gateway's `vendor/` prefix.
 */
export function isReasoningModel(modelId: string, flag: boolean | undefined): boolean {
  if (flag !== undefined) return flag;
  const id = modelId.slice(modelId.lastIndexOf("/") + 1).toLowerCase();
  return /^o\d+(-.*)?$/.test(id) || id.startsWith("gpt-5-thinking");
}
