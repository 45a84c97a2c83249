import { randomUUID } from "node:crypto";
import type { RunArtifact } from "../contracts/run-types.js";
import type { ToolResult } from "../contracts/tool.js";
import { ToolError } from "../errors/error-classes.js";
import type { McpCallResult } from "./mcp-sdk.js";

/** Most characters of a server's error text a `ToolError` message carries. */
const MAX_ERROR_TEXT = 4000;

/** What an MCP tool's result becomes: `data.text` (its text content), `data.structured`, `data.content`. */
export interface McpToolData {
  text?: string;
  structured?: Record<string, unknown>;
  /** Non-text content: resources inline, images, audio and binary resources as references to run artifacts. */
  content?: Record<string, unknown>[];
}

/**
 * Map a `tools/call` result to a Keel `ToolResult`. Text content is joined into `data.text`; images,
 * audio and binary resources become run artifacts (never inlined into the transcript) referenced by id; text
 * resources and resource links stay inline. `isError: true` throws a `ToolError` carrying the server's text,
 * which the model sees as the call's error.
 */
export function mapMcpResult(
  result: McpCallResult,
  where: { server: string; tool: string },
  artifacts: RunArtifact[] | undefined,
): ToolResult<McpToolData | unknown> {
  if (result.toolResult !== undefined && result.content === undefined) {
    return { ok: true, summary: `${where.tool} answered`, data: result.toolResult, artifacts: [] };
  }
  const texts: string[] = [];
  const content: Record<string, unknown>[] = [];
  const references: ToolResult["artifacts"] = [];
  // The payload is what the artifact stores: `mimeType` and `data` (base64), and a resource's `uri`.
  const toArtifact = (kind: string, payload: { mimeType: unknown; data: unknown; uri?: unknown }) => {
    const id = `mcp-${randomUUID().slice(0, 8)}`;
    const name = `${where.tool}-${references.length + 1}`;
    const { data } = payload;
    const bytes = typeof data === "string" ? Math.floor((data.length * 3) / 4) : undefined;
    artifacts?.push({
      name,
      kind,
      payload,
      metadata: { id, source: "mcp", server: where.server, tool: where.tool },
    });
    references.push(bytes === undefined ? { id, name } : { id, name, bytes });
    return id;
  };
  for (const item of result.content ?? []) {
    switch (item.type) {
      case "text":
        texts.push(String(item.text ?? ""));
        break;
      case "image":
      case "audio":
        content.push({
          type: item.type,
          mimeType: item.mimeType,
          artifact: toArtifact(item.type, { mimeType: item.mimeType, data: item.data }),
        });
        break;
      case "resource": {
        const resource = (item.resource ?? {}) as Record<string, unknown>;
        if (typeof resource.text === "string") {
          content.push({
            type: "resource",
            uri: resource.uri,
            mimeType: resource.mimeType,
            text: resource.text,
          });
        } else {
          content.push({
            type: "resource",
            uri: resource.uri,
            mimeType: resource.mimeType,
            artifact: toArtifact("resource", {
              mimeType: resource.mimeType,
              data: resource.blob,
              uri: resource.uri,
            }),
          });
        }
        break;
      }
      default:
        content.push(item);
    }
  }
  if (result.isError === true) {
    const text = texts.join("\n").slice(0, MAX_ERROR_TEXT) || "no detail given";
    throw new ToolError(`MCP tool '${where.tool}' reported an error: ${text}`, {
      code: "tool.mcp_error",
      context: { server: where.server, mcpTool: where.tool },
      hint: "The MCP server ran the tool and it failed; read its message and adjust the arguments",
    });
  }
  const data: McpToolData = {};
  if (texts.length > 0) data.text = texts.join("\n");
  if (result.structuredContent !== undefined) data.structured = result.structuredContent;
  if (content.length > 0) data.content = content;
  const parts = [
    texts.length > 0 ? `${texts.length} text` : "",
    content.length > 0 ? `${content.length} other` : "",
  ]
    .filter(Boolean)
    .join(" and ");
  return {
    ok: true,
    summary: `${where.tool} answered${parts ? ` with ${parts} content item(s)` : ""}`,
    data,
    artifacts: references,
  };
}
