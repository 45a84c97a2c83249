import type { RunContext, Tool, ToolContext, ToolResult } from "../contracts/tool.js";
import { ConfigError, ToolError, ToolTimeoutError } from "../errors/error-classes.js";
import { KeelError } from "../errors/keel-error.js";
import type { Toolset } from "../tools/toolset.js";
import { McpConnections } from "./mcp-connections.js";
import { errorCode, eventIdsOf, type McpEventIds, McpEvents } from "./mcp-events.js";
import { mapMcpResult } from "./mcp-result.js";
import { loadMcpSdk, type McpCallResult, type McpSdk, type McpToolInfo } from "./mcp-sdk.js";
import { inputSchemaOf, McpTool, mcpToolName } from "./mcp-tool.js";
import {
  DEFAULT_MCP_TIMEOUT_MS,
  type McpConnectionMode,
  type McpToolsetOptions,
  serverLabel,
} from "./mcp-toolset-options.js";

/** One `tool.mcp.call` event: how a call went. */
interface CallOutcome {
  mcpName: string;
  success: boolean;
  startedAt: number;
  ids: McpEventIds;
  error?: string | undefined;
}

/**
 * The `mcp` toolset: one MCP server's tools (filtered by an allow-list) as Keel tools named
 * `mcp__<id>__<tool>`, with the server's input schemas, arguments validated before each call. Connections are
 * made per call or pooled per session (released by `releaseSession`, all closed by `close`; see
 * {@link McpConnections}); identical concurrent calls share one request; a pooled Streamable HTTP connection
 * whose server forgot its session (see `isUnknownSession`) reconnects once and retries.
 * `tool.mcp.connect`, `tool.mcp.call`, `tool.mcp.preflight` and `tool.mcp.close` carry ids, mode, status and
 * durations, never arguments or results.
 *
 * @example
 * const github = await McpToolset.create({
 *   id: "fs",
 *   server: { transport: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] },
 *   tools: ["read_text_file"],
 *   connection: "pooled",
 * });
 * await Runtime.fromDict({ agents: [{ id: "a", name: "A", tools: [...github.tools()] }] });
 */
export class McpToolset implements Toolset {
  readonly kind = "toolset" as const;
  readonly name: string;
  readonly serverLabel: string;
  readonly mode: McpConnectionMode;
  private readonly exposed: McpTool[];
  private readonly events: McpEvents;
  private readonly connections: McpConnections;
  private readonly inflight = new Map<string, Promise<ToolResult>>();
  private readonly preflights = new Map<string, Promise<void>>();
  private readonly timeoutMs: number;

  private constructor(
    private readonly options: McpToolsetOptions,
    sdk: McpSdk,
    listed: readonly McpToolInfo[],
  ) {
    this.name = options.id;
    this.serverLabel = serverLabel(options.server);
    this.mode = options.connection ?? "per_call";
    this.timeoutMs = options.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
    this.events = new McpEvents(options.eventBus);
    this.connections = new McpConnections({
      sdk,
      server: options.server,
      toolId: this.name,
      serverLabel: this.serverLabel,
      mode: this.mode,
      timeoutMs: this.timeoutMs,
      events: this.events,
    });
    const allow = options.tools?.length ? new Set(options.tools) : undefined;
    const prefix = options.namePrefix ?? `mcp__${options.id}__`;
    this.exposed = listed
      .filter((info) => allow === undefined || allow.has(info.name))
      .map(
        (info) =>
          new McpTool({
            toolset: this,
            info,
            name: mcpToolName(prefix, info.name),
            validator: sdk.compileSchema(inputSchemaOf(info)),
          }),
      );
  }

  /** Connect, list the server's tools and build the toolset; the listing connection is closed. */
  static async create(options: McpToolsetOptions): Promise<McpToolset> {
    const sdk = options.sdk ?? (await loadMcpSdk());
    const probe = new McpToolset(options, sdk, []);
    const listed = await probe.connections.listTools({}, "per_call");
    const toolset = new McpToolset(options, sdk, listed);
    if (toolset.exposed.length === 0) {
      const names = listed.map((tool) => tool.name);
      throw new ConfigError(
        options.tools?.length
          ? `MCP server ${toolset.serverLabel} has none of the allow-listed tools ${options.tools.join(", ")}`
          : `MCP server ${toolset.serverLabel} lists no tools`,
        {
          hint: `Its tools: ${names.join(", ") || "none"}`,
          context: { toolId: options.id },
        },
      );
    }
    toolset.missing = missingNames(options.tools, listed);
    return toolset;
  }

  /** Allow-listed names the server did not list when the toolset was built. */
  private missing: string[] = [];

  tools(): readonly Tool[] {
    return this.exposed;
  }

  /** Sessions holding a pooled connection. */
  pooledSessions(): string[] {
    return this.connections.pooledSessions();
  }

  /** Connections open now (pooled and in-flight per-call ones). */
  openConnections(): number {
    return this.connections.openCount();
  }

  /**
   * Once per session: allow-listed tools the server lacks are a config error; with `probeOnPreflight`, connect
   * and list the server's tools (in `pooled` mode the connection stays as the session's), emitting
   * `tool.mcp.preflight`.
   */
  preflight(ctx: Pick<RunContext, "sessionId"> & Partial<RunContext>): Promise<void> {
    const sessionId = ctx.sessionId;
    let pending = this.preflights.get(sessionId);
    if (pending === undefined) {
      pending = this.runPreflight(eventIdsOf(ctx)).catch((error: unknown) => {
        this.preflights.delete(sessionId);
        throw error;
      });
      this.preflights.set(sessionId, pending);
    }
    return pending;
  }

  private async runPreflight(ids: McpEventIds): Promise<void> {
    this.checkAllowList(this.missing);
    if (this.options.probeOnPreflight !== true) return;
    const startedAt = performance.now();
    try {
      const listed = await this.connections.listTools(ids, this.mode);
      this.events.emit(
        "tool.mcp.preflight",
        {
          toolId: this.name,
          server: this.serverLabel,
          result: "ok",
          durationMs: performance.now() - startedAt,
          toolCount: listed.length,
        },
        ids,
      );
      this.checkAllowList(missingNames(this.options.tools, listed));
    } catch (error) {
      if (!(error instanceof ConfigError)) {
        this.events.emit(
          "tool.mcp.preflight",
          {
            toolId: this.name,
            server: this.serverLabel,
            result: "error",
            error: errorCode(error),
            durationMs: performance.now() - startedAt,
          },
          ids,
        );
      }
      throw error;
    }
  }

  private checkAllowList(missing: readonly string[]): void {
    if (missing.length === 0) return;
    throw new ConfigError(
      `MCP server ${this.serverLabel} has no tool(s) ${missing.map((name) => `'${name}'`).join(", ")} named in the "tools" allow-list`,
      {
        hint: `Drop them from "tools" or fix their spelling; the server lists: ${this.exposed.map((tool) => tool.mcpName).join(", ")}`,
        context: { toolId: this.name },
      },
    );
  }

  /** Call one of the server's tools (arguments already validated). */
  call(mcpName: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    if (this.options.dedupInflight === false) return this.callOnce(mcpName, args, ctx);
    const key = `${ctx.sessionId}\u0000${mcpName}\u0000${canonicalJson(args)}`;
    const shared = this.inflight.get(key);
    if (shared !== undefined) return shared;
    const pending = this.callOnce(mcpName, args, ctx).finally(() => this.inflight.delete(key));
    this.inflight.set(key, pending);
    return pending;
  }

  private async callOnce(
    mcpName: string,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<ToolResult> {
    if (this.connections.closed) {
      throw new ToolError(`MCP toolset '${this.name}' is closed`, { hint: "The runtime was closed" });
    }
    const ids = eventIdsOf(ctx);
    const startedAt = performance.now();
    let result: McpCallResult;
    try {
      result = await this.connections.callTool({
        name: mcpName,
        args,
        sessionId: ctx.sessionId,
        ids,
        signal: ctx.signal,
      });
    } catch (error) {
      this.emitCall({ mcpName, success: false, startedAt, ids, error: errorCode(error) });
      throw this.callError(error, mcpName);
    }
    this.emitCall({
      mcpName,
      success: result.isError !== true,
      startedAt,
      ids,
      error: result.isError ? "tool_error" : undefined,
    });
    return mapMcpResult(result, { server: this.serverLabel, tool: mcpName }, ctx.artifacts);
  }

  /** Close the session's pooled connection. Idempotent. */
  async releaseSession(sessionId: string): Promise<void> {
    this.preflights.delete(sessionId);
    await this.connections.release(sessionId);
  }

  /** Close every connection; later calls fail. Idempotent. */
  async close(): Promise<void> {
    const closing = this.connections.close();
    this.preflights.clear();
    await closing;
  }

  private emitCall(outcome: CallOutcome): void {
    const payload: Record<string, unknown> = {
      toolId: this.name,
      toolName: outcome.mcpName,
      server: this.serverLabel,
      mode: this.mode,
      success: outcome.success,
      durationMs: performance.now() - outcome.startedAt,
    };
    if (outcome.error !== undefined) payload.error = outcome.error;
    this.events.emit("tool.mcp.call", payload, outcome.ids);
  }

  private callError(error: unknown, mcpName: string): unknown {
    if (KeelError.isInstance(error)) return error;
    const code = (error as { code?: unknown })?.code;
    const message = (error as Error)?.message ?? String(error);
    if (code === -32001) {
      return new ToolTimeoutError(`MCP tool '${mcpName}' timed out after ${this.timeoutMs} ms`, {
        cause: error,
        timeoutMs: this.timeoutMs,
        hint: 'Raise "timeout_ms" in the tool\'s config if the server is just slow',
      });
    }
    return new ToolError(`MCP tool '${mcpName}' on ${this.serverLabel} failed: ${message}`, {
      cause: error,
      retryable: typeof code !== "number" || code >= 500 || code === 404,
      context: { toolId: this.name, mcpTool: mcpName },
    });
  }
}

function missingNames(allow: readonly string[] | undefined, listed: readonly McpToolInfo[]): string[] {
  if (!allow?.length) return [];
  const names = new Set(listed.map((tool) => tool.name));
  return allow.filter((name) => !names.has(name));
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are the same call. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    return Object.fromEntries(
      Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  });
}
