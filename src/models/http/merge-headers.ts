/**
 * Request headers: the provider's defaults, then `llm.extra_headers`, then per-call ones. Names are compared
 * without case, so a user's `Anthropic-Version` replaces the default `anthropic-version`.
 */
export function mergeHeaders(
  ...layers: (Readonly<Record<string, string>> | undefined)[]
): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const layer of layers) {
    if (!layer) continue;
    for (const [name, value] of Object.entries(layer)) merged[name.toLowerCase()] = value;
  }
  return merged;
}
