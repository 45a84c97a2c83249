import { Buffer } from "node:buffer";
import type { RunArtifact } from "../contracts/run-types.js";
import { isToolResult, type ToolResult } from "../contracts/tool.js";
import { formatToolResult } from "../tools/format-tool-result.js";
import type { RunFolder } from "./run-folder.js";

/** `sandbox.large_output_bytes` when the config does not give it. */
export const DEFAULT_LARGE_OUTPUT_BYTES = 16 * 1024;
/** The run-artifact kind of a tool output too large to inline. */
export const TOOL_OUTPUT_KIND = "tool_output";

/** What a large output became: the result to record instead of it, and the artifact holding it. */
export interface OffloadedOutput {
  result: ToolResult;
  artifact: RunArtifact;
}

/**
 * A tool result whose data is over `limit` bytes (UTF-8, as the model would see it) becomes a run artifact: the
 * returned result keeps `ok`, the summary and any error, and names the artifact by id instead of carrying the
 * data. Returns undefined for anything within the limit. Numbers, booleans and small strings cost a
 * type check and a length comparison; objects are serialised once to be measured.
 */
export function offloadLargeOutput(
  data: unknown,
  call: { toolCallId: string; toolId: string },
  where: { limit: number; folder: RunFolder | undefined },
): OffloadedOutput | undefined {
  const { limit, folder } = where;
  const payload = isToolResult(data) ? data.data : data;
  if (typeof payload === "string") {
    // UTF-8 takes at least one byte per UTF-16 unit and at most three.
    if (payload.length * 3 <= limit) return undefined;
  } else if (typeof payload !== "object" || payload === null) return undefined;
  const text = formatToolResult(payload);
  if (text.length * 3 <= limit) return undefined;
  const bytes = Buffer.byteLength(text);
  if (bytes <= limit) return undefined;
  const id = `output-${encodeURIComponent(call.toolCallId)}`;
  const fileName = `${id}${typeof payload === "string" ? ".txt" : ".json"}`;
  const relativePath = folder?.writeArchive(fileName, text);
  const reference: ToolResult["artifacts"][number] = { id, name: fileName, bytes };
  if (relativePath !== undefined) reference.path = relativePath;
  const note = `output of ${bytes} bytes stored as artifact ${id}, not shown`;
  const result: ToolResult = isToolResult(data)
    ? { ok: data.ok, summary: `${data.summary} (${note})`, artifacts: [...data.artifacts, reference] }
    : {
        ok: true,
        summary: `Tool '${call.toolId}' returned a large output (${note})`,
        artifacts: [reference],
      };
  if (isToolResult(data) && data.error !== undefined) result.error = data.error;
  const metadata: Record<string, unknown> = { id, toolCallId: call.toolCallId, toolId: call.toolId, bytes };
  if (relativePath !== undefined) metadata.path = relativePath;
  return { result, artifact: { name: id, kind: TOOL_OUTPUT_KIND, payload: text, metadata } };
}
