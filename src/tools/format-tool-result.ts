import { isToolResult } from "./tool.js";

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

/** The text the model sees for a refused or failed call (LC-7). */
export function formatToolError(code: string, message: string): string {
  return JSON.stringify({ ok: false, error: { code, message } });
}

function safeJson(value: unknown): string {
  try {
    return (
      JSON.stringify(value, (_key, item) => (typeof item === "bigint" ? item.toString() : item)) ??
      String(value)
    );
  } catch {
    return String(value);
  }
}
