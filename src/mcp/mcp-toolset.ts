import path from "node:path";
import { z } from "zod";
import { type EventBus, RuntimeEvent } from "../contracts/runtime-event.js";
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
import { ConfigError, PluginLoadError, ToolError, ToolTimeoutError } from "../errors/error-classes.js";
import { KeelError } from "../errors/keel-error.js";
import type { PluginDefinition, PluginFactoryContext } from "../plugins/plugin-registry.js";
import type { Toolset } from "../tools/toolset.js";
import { mapMcpResult } from "./mcp-result.js";
import {
  type ArgumentValidator,
  loadMcpSdk,
  MCP_SDK_PACKAGE,
  type McpCallResult,
  type McpClientLike,
  type McpSdk,
  type McpToolInfo,
  type McpTransportLike,
} from "./mcp-sdk.js";
import { UnreachableMcpTool, type UnreachableMcpToolOptions } from "./unreachable-mcp-tool.js";

export type McpConnectionMode = "per_call" | "pooled";

export type McpServerConfig =
  | {
      transport: "stdio";
      command: string;
      args?: string[];
      /** Added to the SDK's safe default environment (PATH, HOME, …); the parent's other variables are not passed. */
      env?: Record<string, string>;
      cwd?: string;
      /** The server's stderr: shown (`inherit`, default) or dropped. */
      stderr?: "inherit" | "ignore";
    }
  | { transport: "http"; url: string; headers?: Record<string, string> };

/** Options of {@link McpToolset.create}. */
export interface McpToolsetOptions {
  /** The config entry's id: events' `toolId`, and part of each tool's name. */
  id: string;
  server: McpServerConfig;
  /** Allow-list of the server's tool names; absent or empty = all. */
  tools?: readonly string[];
  /** `per_call` (default): connect, call, close. `pooled`: one connection per session until released. */
  connection?: McpConnectionMode;
  /** Connect and list the server's tools in preflight, once per session (default false). */
  probeOnPreflight?: boolean;
  /** Identical concurrent calls in one session share one request (default true). */
  dedupInflight?: boolean;
  /** Timeout of connecting, listing and each call (default 60000). */
  timeoutMs?: number;
  /** Prefix of the Keel tool names (default `mcp__<id>__`; `""` keeps the server's names). */
  namePrefix?: string;
  /** Where `tool.mcp.*` events go when not in a call (preflight, release, close). */
  eventBus?: EventBus | (() => EventBus | undefined);
  /** The SDK (tests); default: import `@modelcontextprotocol/sdk`. */
  sdk?: McpSdk;
}

interface Connection {
  readonly client: McpClientLike;
  readonly transport: McpTransportLike;
  readonly mode: McpConnectionMode;
  dead: boolean;
  closing?: Promise<void>;
}

interface EventIds {
  runId?: string;
  sessionId?: string;
  agentId?: string;
  eventBus?: EventBus;
  /** The run's numbered log, when the event belongs to a call or a preflight of a run. */
  record?: (kind: string, payload: Record<string, unknown>) => void;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * The `mcp` toolset: one MCP server's tools (filtered by an allow-list) as Keel tools named
 * `mcp__<id>__<tool>`, with the server's input schemas, arguments validated before each call. Connections are
 * made per call or pooled per session (released by `releaseSession`, all closed by `close`); identical
 * concurrent calls share one request; a pooled Streamable HTTP connection whose server forgot its session (see
 * {@link isUnknownSession}) reconnects once and retries. `tool.mcp.connect`, `tool.mcp.call`,
 * `tool.mcp.preflight` and `tool.mcp.close` carry ids, mode, status and durations, never arguments or results.
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
  private readonly pool = new Map<string, Promise<Connection>>();
  private readonly open = new Set<Connection>();
  private readonly inflight = new Map<string, Promise<ToolResult>>();
  private readonly preflights = new Map<string, Promise<void>>();
  private readonly timeoutMs: number;
  private closed = false;

  private constructor(
    private readonly options: McpToolsetOptions,
    private readonly sdk: McpSdk,
    listed: readonly McpToolInfo[],
  ) {
    this.name = options.id;
    this.serverLabel = serverLabel(options.server);
    this.mode = options.connection ?? "per_call";
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const allow = options.tools?.length ? new Set(options.tools) : undefined;
    const prefix = options.namePrefix ?? `mcp__${options.id}__`;
    this.exposed = listed
      .filter((info) => allow === undefined || allow.has(info.name))
      .map(
        (info) =>
          new McpTool(this, info, toolName(prefix, info.name), sdk.compileSchema(inputSchemaOf(info))),
      );
  }

  /** Connect, list the server's tools and build the toolset; the listing connection is closed. */
  static async create(options: McpToolsetOptions): Promise<McpToolset> {
    const sdk = options.sdk ?? (await loadMcpSdk());
    const probe = new McpToolset(options, sdk, []);
    const listed = await probe.listTools({}, "per_call");
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
    return [...this.pool.keys()];
  }

  /** Connections open now (pooled and in-flight per-call ones). */
  openConnections(): number {
    return this.open.size;
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
      pending = this.runPreflight(idsOf(ctx)).catch((error: unknown) => {
        this.preflights.delete(sessionId);
        throw error;
      });
      this.preflights.set(sessionId, pending);
    }
    return pending;
  }

  private async runPreflight(ids: EventIds): Promise<void> {
    this.checkAllowList(this.missing);
    if (this.options.probeOnPreflight !== true) return;
    const startedAt = performance.now();
    try {
      const listed = await this.listTools(ids, this.mode);
      this.emit(
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
        this.emit(
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
    if (this.closed) {
      throw new ToolError(`MCP toolset '${this.name}' is closed`, { hint: "The runtime was closed" });
    }
    const ids = idsOf(ctx);
    const startedAt = performance.now();
    const request = { timeout: this.timeoutMs, signal: ctx.signal };
    let result: McpCallResult;
    try {
      result =
        this.mode === "pooled"
          ? await this.callPooled(mcpName, args, ctx.sessionId, ids, request)
          : await this.withConnection(ids, "per_call", (connection) =>
              connection.client.callTool({ name: mcpName, arguments: args }, undefined, request),
            );
    } catch (error) {
      this.emitCall(mcpName, false, startedAt, ids, errorCode(error));
      throw this.callError(error, mcpName);
    }
    this.emitCall(
      mcpName,
      result.isError !== true,
      startedAt,
      ids,
      result.isError ? "tool_error" : undefined,
    );
    return mapMcpResult(result, { server: this.serverLabel, tool: mcpName }, ctx.artifacts);
  }

  private async callPooled(
    mcpName: string,
    args: Record<string, unknown>,
    sessionId: string,
    ids: EventIds,
    request: { timeout: number; signal: AbortSignal },
  ): Promise<McpCallResult> {
    const connection = await this.pooled(sessionId, ids);
    try {
      return await connection.client.callTool({ name: mcpName, arguments: args }, undefined, request);
    } catch (error) {
      // A restarted Streamable HTTP server refuses the session it no longer knows: the request never ran, so
      // reconnect once and send it again.
      if (!isUnknownSession(this.sdk.httpStatus(error), (error as Error)?.message ?? "")) throw error;
      await this.dropPooled(sessionId, connection, ids);
      const fresh = await this.pooled(sessionId, ids, true);
      return await fresh.client.callTool({ name: mcpName, arguments: args }, undefined, request);
    }
  }

  /** Close the session's pooled connection. Idempotent. */
  async releaseSession(sessionId: string): Promise<void> {
    this.preflights.delete(sessionId);
    const pending = this.pool.get(sessionId);
    if (pending === undefined) return;
    this.pool.delete(sessionId);
    const connection = await pending.catch(() => undefined);
    if (connection !== undefined) await this.disconnect(connection, { sessionId });
  }

  /** Close every connection; later calls fail. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const pooled = [...this.pool.values()];
    this.pool.clear();
    this.preflights.clear();
    await Promise.allSettled(pooled);
    await Promise.allSettled([...this.open].map((connection) => this.disconnect(connection, {})));
  }

  private pooled(sessionId: string, ids: EventIds, reconnect = false): Promise<Connection> {
    const existing = this.pool.get(sessionId);
    if (existing !== undefined) {
      return existing.then((connection) => {
        if (!connection.dead) return connection;
        if (this.pool.get(sessionId) === existing) this.pool.delete(sessionId);
        this.open.delete(connection);
        return this.pooled(sessionId, ids, true);
      });
    }
    const pending = this.connect(ids, "pooled", reconnect);
    this.pool.set(sessionId, pending);
    pending.catch(() => {
      if (this.pool.get(sessionId) === pending) this.pool.delete(sessionId);
    });
    return pending;
  }

  private async dropPooled(sessionId: string, connection: Connection, ids: EventIds): Promise<void> {
    const current = this.pool.get(sessionId);
    if (current !== undefined && (await current.catch(() => undefined)) === connection)
      this.pool.delete(sessionId);
    connection.dead = true;
    await this.disconnect(connection, ids);
  }

  private async listTools(ids: EventIds, mode: McpConnectionMode): Promise<McpToolInfo[]> {
    const list = async (connection: Connection) => {
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await connection.client.listTools(cursor === undefined ? {} : { cursor }, {
          timeout: this.timeoutMs,
        });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    };
    if (mode === "pooled" && ids.sessionId !== undefined) return list(await this.pooled(ids.sessionId, ids));
    return this.withConnection(ids, "per_call", list);
  }

  private async withConnection<T>(
    ids: EventIds,
    mode: McpConnectionMode,
    use: (connection: Connection) => Promise<T>,
  ): Promise<T> {
    const connection = await this.connect(ids, mode, false);
    try {
      return await use(connection);
    } finally {
      await this.disconnect(connection, ids);
    }
  }

  private async connect(ids: EventIds, mode: McpConnectionMode, reconnect: boolean): Promise<Connection> {
    const startedAt = performance.now();
    const client = this.sdk.createClient();
    const transport = this.transport();
    try {
      await client.connect(transport, { timeout: this.timeoutMs });
    } catch (error) {
      await transport.close().catch(() => undefined);
      this.emit(
        "tool.mcp.connect",
        {
          toolId: this.name,
          server: this.serverLabel,
          mode,
          success: false,
          error: errorCode(error),
          durationMs: performance.now() - startedAt,
        },
        ids,
      );
      throw new ToolError(
        `Could not connect to MCP server ${this.serverLabel}: ${(error as Error)?.message ?? String(error)}`,
        {
          cause: error,
          retryable: true,
          hint:
            this.options.server.transport === "stdio"
              ? "Check the server's command, args and env; run it by hand to see its error"
              : "Check the server's URL and headers and that it is running",
          context: { toolId: this.name },
        },
      );
    }
    const connection: Connection = { client, transport, mode, dead: false };
    client.onclose = () => {
      connection.dead = true;
      this.open.delete(connection);
    };
    this.open.add(connection);
    if (this.closed) {
      await this.disconnect(connection, ids);
      throw new ToolError(`MCP toolset '${this.name}' is closed`, { hint: "The runtime was closed" });
    }
    const payload: Record<string, unknown> = {
      toolId: this.name,
      server: this.serverLabel,
      mode,
      success: true,
      durationMs: performance.now() - startedAt,
    };
    if (reconnect) payload.reconnect = true;
    this.emit("tool.mcp.connect", payload, ids);
    return connection;
  }

  private disconnect(connection: Connection, ids: EventIds): Promise<void> {
    connection.closing ??= (async () => {
      const startedAt = performance.now();
      connection.dead = true;
      // A Streamable HTTP session is ended on the server too (a 405 from servers that refuse is fine).
      if (typeof connection.transport.terminateSession === "function" && connection.transport.sessionId) {
        await withTimeout(connection.transport.terminateSession(), 2000).catch(() => undefined);
      }
      await connection.client.close().catch(() => undefined);
      this.open.delete(connection);
      this.emit(
        "tool.mcp.close",
        {
          toolId: this.name,
          server: this.serverLabel,
          mode: connection.mode,
          durationMs: performance.now() - startedAt,
        },
        ids,
      );
    })();
    return connection.closing;
  }

  private transport(): McpTransportLike {
    const server = this.options.server;
    if (server.transport === "stdio") {
      const params: Parameters<McpSdk["stdioTransport"]>[0] = {
        command: server.command,
        args: server.args ?? [],
        stderr: server.stderr ?? "inherit",
      };
      if (server.env !== undefined) params.env = server.env;
      if (server.cwd !== undefined) params.cwd = server.cwd;
      return this.sdk.stdioTransport(params);
    }
    return this.sdk.httpTransport(
      new URL(server.url),
      server.headers ? { requestInit: { headers: server.headers } } : {},
    );
  }

  private emitCall(
    toolName: string,
    success: boolean,
    startedAt: number,
    ids: EventIds,
    error?: string,
  ): void {
    const payload: Record<string, unknown> = {
      toolId: this.name,
      toolName,
      server: this.serverLabel,
      mode: this.mode,
      success,
      durationMs: performance.now() - startedAt,
    };
    if (error !== undefined) payload.error = error;
    this.emit("tool.mcp.call", payload, ids);
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

  /**
   * A `tool.mcp.*` event: in the run's numbered log when it happens within a run's call or preflight, else (a
   * connect while loading, a close at `releaseSession` or `close()`) published on the bus with what ids it has.
   */
  private emit(kind: string, payload: Record<string, unknown>, ids: EventIds): void {
    if (ids.record !== undefined) {
      ids.record(kind, payload);
      return;
    }
    const bus = ids.eventBus ?? this.fallbackBus();
    if (bus === undefined) return;
    bus.publish(
      new RuntimeEvent(kind, payload, Date.now(), ids.runId ?? "", ids.sessionId ?? "", ids.agentId ?? ""),
    );
  }

  private fallbackBus(): EventBus | undefined {
    const option = this.options.eventBus;
    try {
      return typeof option === "function" ? option() : option;
    } catch {
      return undefined;
    }
  }
}

/** One MCP server tool as a Keel tool. */
export class McpTool implements Tool {
  readonly description: string;
  readonly durableIdempotent: boolean;
  private readonly spec: ToolExecutionSpec;

  constructor(
    readonly toolset: McpToolset,
    readonly info: McpToolInfo,
    readonly name: string,
    private readonly validator: ArgumentValidator,
  ) {
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

const stringRecord = z.record(z.string(), z.string());

/** The config of `{"type": "mcp"}`. */
export const mcpToolConfigSchema = z
  .object({
    server: z.preprocess(
      (value) => {
        // `transport` may be left out: a `command` means stdio, a `url` means streamable HTTP.
        if (typeof value !== "object" || value === null || "transport" in value) return value;
        if ("command" in value) return { ...value, transport: "stdio" };
        if ("url" in value) return { ...value, transport: "http" };
        return value;
      },
      z.discriminatedUnion("transport", [
        z
          .object({
            transport: z.literal("stdio"),
            command: z.string().min(1),
            args: z.array(z.string()).default([]),
            env: stringRecord.optional(),
            cwd: z.string().min(1).optional(),
            stderr: z.enum(["inherit", "ignore"]).default("inherit"),
          })
          .strict(),
        z
          .object({
            transport: z.literal("http"),
            url: z.url({ protocol: /^https?$/ }),
            headers: stringRecord.optional(),
          })
          .strict(),
      ]),
    ),
    tools: z.array(z.string().min(1)).default([]),
    connection: z.enum(["per_call", "pooled"]).optional(),
    /** The seed's name for `connection`. */
    connection_mode: z.enum(["per_call", "pooled"]).optional(),
    probe_on_preflight: z.boolean().default(false),
    dedup_inflight: z.boolean().default(true),
    timeout_ms: z.number().int().positive().default(DEFAULT_TIMEOUT_MS),
    name_prefix: z.string().optional(),
  })
  .refine(
    (config) =>
      !(config.connection && config.connection_mode && config.connection !== config.connection_mode),
    {
      message: '"connection" and "connection_mode" disagree; give one',
    },
  );

/** `{"id": "fs", "type": "mcp", "config": {"server": {...}, "tools": [...], "connection": "pooled"}}`. */
export const mcpToolPlugin: PluginDefinition<McpToolset | UnreachableMcpTool> = {
  kind: "tool",
  type: "mcp",
  configSchema: mcpToolConfigSchema,
  requiresPackage: MCP_SDK_PACKAGE,
  create: async (raw, context) => {
    const config = raw as z.output<typeof mcpToolConfigSchema>;
    const server: McpServerConfig =
      config.server.transport === "stdio"
        ? {
            ...config.server,
            ...(config.server.cwd === undefined
              ? {}
              : { cwd: path.resolve(context.baseDir, config.server.cwd) }),
          }
        : config.server;
    const options: McpToolsetOptions = {
      id: context.id ?? "mcp",
      server,
      tools: config.tools,
      connection: config.connection ?? config.connection_mode ?? "per_call",
      probeOnPreflight: config.probe_on_preflight,
      dedupInflight: config.dedup_inflight,
      timeoutMs: config.timeout_ms,
      eventBus: () => (context.runtime as { eventBus?: EventBus } | undefined)?.eventBus,
    };
    if (config.name_prefix !== undefined) options.namePrefix = config.name_prefix;
    try {
      return await McpToolset.create(options);
    } catch (error) {
      // A config the server contradicts, or a missing SDK, is the config's to fix: it fails the load. A server
      // that cannot be reached fails the runs instead, in their preflight (see UnreachableMcpTool).
      if (error instanceof ConfigError || error instanceof PluginLoadError) throw error;
      return unreachableStandIn(options, error, context);
    }
  },
};

function unreachableStandIn(
  options: McpToolsetOptions,
  error: unknown,
  context: PluginFactoryContext,
): UnreachableMcpTool {
  const runtime = context.runtime as { invalidateAgent?: (agentId: string) => Promise<void> } | undefined;
  const agentId = context.agent?.id;
  const standIn: UnreachableMcpToolOptions = {
    id: options.id,
    serverLabel: serverLabel(options.server),
    error,
    probe: async () => {
      await (await McpToolset.create(options)).close();
    },
  };
  if (agentId !== undefined && typeof runtime?.invalidateAgent === "function") {
    // Not awaited: the agent's runs (the one whose preflight noticed among them) end before it is closed.
    standIn.onReachable = () => void runtime.invalidateAgent?.(agentId).catch(() => undefined);
  }
  return new UnreachableMcpTool(standIn);
}

/** What the server calls itself in events and messages: never headers, credentials or query strings. */
function serverLabel(server: McpServerConfig): string {
  if (server.transport === "stdio") {
    return [
      path.basename(server.command),
      ...(server.args ?? []).slice(0, 3).map((arg) => path.basename(arg)),
    ].join(" ");
  }
  try {
    const url = new URL(server.url);
    return `${url.origin}${url.pathname}`;
  } catch {
    return "(invalid url)";
  }
}

function inputSchemaOf(info: McpToolInfo): JsonSchema {
  const schema = info.inputSchema ?? {};
  return schema.type === undefined ? { type: "object", ...schema } : schema;
}

/** A Keel tool name from the prefix and the server's name: `[A-Za-z0-9_-]`, at most 64 characters. */
function toolName(prefix: string, name: string): string {
  return `${prefix}${name}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
}

function missingNames(allow: readonly string[] | undefined, listed: readonly McpToolInfo[]): string[] {
  if (!allow?.length) return [];
  const names = new Set(listed.map((tool) => tool.name));
  return allow.filter((name) => !names.has(name));
}

function idsOf(ctx: Partial<RunContext> & Pick<Partial<ToolContext>, "emitEvent">): EventIds {
  const ids: EventIds = {};
  if (typeof ctx.emitEvent === "function") ids.record = ctx.emitEvent.bind(ctx);
  if (ctx.runId !== undefined) ids.runId = ctx.runId;
  if (ctx.sessionId !== undefined) ids.sessionId = ctx.sessionId;
  if (ctx.agentId !== undefined) ids.agentId = ctx.agentId;
  if (ctx.eventBus !== undefined) ids.eventBus = ctx.eventBus;
  return ids;
}

/** What an event says of an error: its class and code, never its message (which may quote arguments). */
function errorCode(error: unknown): string {
  const name = (error as Error)?.name ?? typeof error;
  const code = (error as { code?: unknown })?.code;
  return code === undefined ? name : `${name} ${String(code)}`;
}

/**
 * Whether a Streamable HTTP error is the server saying it does not know the session id the request carried (it
 * restarted, or ended the session), so it refused the request before any handler ran and sending it again on a
 * new session cannot run a tool twice. The MCP spec prescribes 404 for this. The reference server-everything
 * (an Express app written after the SDK's examples, as many servers are) answers 400 with JSON-RPC error -32000
 * "Bad Request: No valid session ID provided" instead; the SDK's `StreamableHTTPError` carries the status as
 * `code` and the response body in its message. So a 400 counts only when its text says the session id is not
 * valid or unknown: any other 400 (a malformed request, a missing header) may have been about the request itself
 * and is not retried. See docs/decisions/0008-mcp-stale-session.md.
 */
export function isUnknownSession(status: number | undefined, message: string): boolean {
  if (status === 404) return true;
  return status === 400 && UNKNOWN_SESSION_TEXT.test(message);
}

const UNKNOWN_SESSION_TEXT =
  /\b(?:no valid|not a valid|invalid|unknown|expired) session\b|\bsession(?: id)? (?:not found|is not valid|is invalid|is unknown|unknown|expired|has expired)\b/i;

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are the same call. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    return Object.fromEntries(
      Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error("timed out")), ms);
      timer.unref?.();
    }),
  ]).finally(() => clearTimeout(timer));
}
