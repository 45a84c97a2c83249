/** A result whose JSON is larger than this many UTF-8 bytes has its content cut. */
export const MAX_RESULT_BYTES = 1024 * 1024;
/** How much of each long text an oversize result keeps. */
export const TRUNCATED_TEXT_CHARS = 10_000;
/** What follows a text that was cut. */
export const TRUNCATION_MARKER = "...[truncated]";

// Artifacts carry base64 that a cut would corrupt, and state values have their own bound that refuses them;
// neither is cut.
const UNCUT_TYPES = new Set(["artifact.created", "state.updated"]);

interface ResultLike {
  type: string;
  data: Record<string, unknown>;
}

/**
 * A result within 1 MiB of JSON: an oversize one keeps its shape with every long text cut to 10,000 characters
 * and the marker, and a tool's parameters or result that are still too large become their own JSON text, cut
 * the same way. An oversize result is thus delivered shortened rather than failing the run. `truncated` says
 * whether anything was cut; a result within the limit is returned as it is.
 */
export function limitResultSize<T extends ResultLike>(
  result: T,
  maxBytes: number = MAX_RESULT_BYTES,
): { result: T; truncated: boolean } {
  if (UNCUT_TYPES.has(result.type) || !exceeds(result, maxBytes)) return { result, truncated: false };
  const data = cutTexts(result.data) as Record<string, unknown>;
  let limited = { ...result, data } as T;
  if (exceeds(limited, maxBytes)) {
    if (result.type === "tool.call.completed" && data.result !== undefined)
      limited = { ...limited, data: { ...data, result: cutJson(data.result) } };
    else if (result.type === "tool.call.started" && data.parameters != null)
      limited = { ...limited, data: { ...data, parameters: cutJson(data.parameters) } };
  }
  return { result: limited, truncated: true };
}

/**
 * A tool's output within `maxBytes` of JSON, cut the same way as a result's: long texts first, then, if still
 * too large, the output as its own cut JSON text.
 */
export function limitToolOutput(value: unknown, maxBytes: number = MAX_RESULT_BYTES): unknown {
  const limited = limitResultSize({ type: "tool.call.completed", data: { result: value } }, maxBytes);
  return limited.result.data.result;
}

function cut(text: string): string {
  return text.length > TRUNCATED_TEXT_CHARS ? text.slice(0, TRUNCATED_TEXT_CHARS) + TRUNCATION_MARKER : text;
}

function cutJson(value: unknown): Record<string, unknown> {
  return { value: cut(JSON.stringify(value) ?? "null"), truncated: true };
}

function cutTexts(value: unknown): unknown {
  if (typeof value === "string") return cut(value);
  if (Array.isArray(value)) return value.map(cutTexts);
  if (typeof value === "object" && value !== null) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = cutTexts(item);
    return copy;
  }
  return value;
}

/**
 * Whether `value`'s JSON is over `maxBytes` UTF-8 bytes. Most results are small, so a walk that bounds the size
 * from above (six bytes a character, the worst JSON escape) settles them without serialising; only a result that
 * might be large is serialised and measured.
 */
function exceeds(value: unknown, maxBytes: number): boolean {
  if (upperBound(value, maxBytes / 6, 0) <= maxBytes / 6) return false;
  const text = JSON.stringify(value);
  return text !== undefined && Buffer.byteLength(text) > maxBytes;
}

/** Characters of `value`'s text (keys and strings) plus one per item, stopping early once over `budget`. */
function upperBound(value: unknown, budget: number, used: number): number {
  if (used > budget) return used;
  if (typeof value === "string") return used + value.length + 2;
  if (Array.isArray(value)) {
    for (const item of value) {
      used = upperBound(item, budget, used + 1);
      if (used > budget) return used;
    }
    return used + 2;
  }
  if (typeof value === "object" && value !== null) {
    if (typeof (value as { toJSON?: unknown }).toJSON === "function")
      return used + (JSON.stringify(value)?.length ?? 0);
    for (const key in value) {
      used = upperBound((value as Record<string, unknown>)[key], budget, used + key.length + 4);
      if (used > budget) return used;
    }
    return used + 2;
  }
  return used + 24;
}
