import { isToolResult } from "../contracts/tool.js";
import { toJsonSafe } from "./to-json-value.js";

/** The text the model sees for a tool's data: strings as they are, everything else as JSON. */
export function formatToolResult(data: unknown): string {
  switch (typeof data) {
    case "string":
      return data;
    case "number":
    case "boolean":
      return String(data);
    case "undefined":
      return "";
  }
  if (isToolResult(data)) {
    const shown: Record<string, unknown> = { ok: data.ok, summary: data.summary };
    if (data.data !== undefined) shown.data = data.data;
    if (data.error !== undefined) shown.error = data.error;
    if (data.artifacts.length > 0) shown.artifacts = data.artifacts;
    return safeJson(shown);
  }
  return safeJson(data);
}

/** The text the model sees for a refused or failed call, with what to do about it when known. */
export function formatToolError(code: string, message: string, hint?: string): string {
  return JSON.stringify({
    ok: false,
    error: hint === undefined ? { code, message } : { code, message, hint },
  });
}

/** JSON even for a value that has none (a result the tool stage did not check): described, never lost. */
function safeJson(value: unknown): string {
  return JSON.stringify(toJsonSafe(value)) ?? String(value);
}
