import type { ToolResult } from "../../contracts/tool.js";

/** A successful `ToolResult`: what happened in a sentence, and the data. */
export function okResult<T>(summary: string, data: T): ToolResult<T> {
  return { ok: true, summary, data, artifacts: [] };
}
