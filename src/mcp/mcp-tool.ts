import {
  DEFAULT_EXECUTION_SPEC,
  type JsonSchema,
  type RunContext,
  type Tool,
  type ToolContext,
  type ToolExecutionSpec,
  type ToolResult,
  type ValidationOutcome,
} from "../contracts/tool.js";
import type { ArgumentValidator, McpToolInfo } from "./mcp-sdk.js";

/** The toolset an {@link McpTool} belongs to: what calls the server and owns the connections. */
export interface McpToolHost {
  readonly serverLabel: string;
  /** Call one of the server's tools (arguments already validated). */
  call(mcpName: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
  preflight(ctx: RunContext): Promise<void>;
  releaseSession(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

/** Options of the {@link McpTool} constructor. */
export interface McpToolOptions {
  toolset: McpToolHost;
  /** The tool as the server listed it. */
  info: McpToolInfo;
  /** The Keel tool name (see {@link mcpToolName}). */
  name: string;
  /** The server's input schema, compiled. */
  validator: ArgumentValidator;
}

/** One MCP server tool as a Keel tool. */
export class McpTool implements Tool {
  readonly toolset: McpToolHost;
  readonly info: McpToolInfo;
  readonly name: string;
  readonly description: string;
  readonly durableIdempotent: boolean;
  private readonly validator: ArgumentValidator;
  private readonly spec: ToolExecutionSpec;

  constructor(options: McpToolOptions) {
    const { toolset, info } = options;
    this.toolset = toolset;
    this.info = info;
    this.name = options.name;
    this.validator = options.validator;
    this.description =
      info.description ?? info.title ?? `The ${info.name} tool of MCP server ${toolset.serverLabel}`;
    const hints = info.annotations ?? {};
    const readOnly = hints.readOnlyHint === true;
    this.durableIdempotent = readOnly || hints.idempotentHint === true;
    this.spec = Object.freeze({
      ...DEFAULT_EXECUTION_SPEC,
      concurrencySafe: readOnly,
      sideEffects: readOnly ? "read" : hints.destructiveHint === true ? "destructive" : "unknown",
    });
  }

  get mcpName(): string {
    return this.info.name;
  }

  schema(): JsonSchema {
    return inputSchemaOf(this.info);
  }

  executionSpec(): ToolExecutionSpec {
    return this.spec;
  }

  /** Arguments against the server's input schema, before any connection is made. */
  validateParams(params: unknown): ValidationOutcome<Record<string, unknown>> {
    const value = params ?? {};
    const outcome = this.validator(value);
    if (outcome.valid) return { ok: true, value: value as Record<string, unknown> };
    return { ok: false, error: outcome.errorMessage };
  }

  invoke(params: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    return this.toolset.call(this.info.name, params ?? {}, ctx);
  }

  preflight(ctx: RunContext): Promise<void> {
    return this.toolset.preflight(ctx);
  }

  releaseSession(sessionId: string): Promise<void> {
    return this.toolset.releaseSession(sessionId);
  }

  close(): Promise<void> {
    return this.toolset.close();
  }
}

/** A tool's input schema, an object schema even when the server left out its `type`. */
export function inputSchemaOf(info: McpToolInfo): JsonSchema {
  const schema = info.inputSchema ?? {};
  return schema.type === undefined ? { type: "object", ...schema } : schema;
}

/** A Keel tool name from the prefix and the server's name: `[A-Za-z0-9_-]`, at most 64 characters. */
export function mcpToolName(prefix: string, name: string): string {
  return `${prefix}${name}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
}
