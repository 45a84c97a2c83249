import { ToolError } from "../errors/error-classes.js";
import { isUnknownSession } from "./is-unknown-session.js";
import { errorCode, type McpEventIds, type McpEvents } from "./mcp-events.js";
import type { McpCallResult, McpClientLike, McpSdk, McpToolInfo, McpTransportLike } from "./mcp-sdk.js";
import type { McpConnectionMode, McpServerConfig } from "./mcp-toolset-options.js";

interface Connection {
  readonly client: McpClientLike;
  readonly transport: McpTransportLike;
  readonly mode: McpConnectionMode;
  dead: boolean;
  closing?: Promise<void>;
}

/** What {@link McpConnections} needs of its toolset. */
export interface McpConnectionsOptions {
  sdk: McpSdk;
  server: McpServerConfig;
  /** The toolset's id: events' `toolId`. */
  toolId: string;
  serverLabel: string;
  mode: McpConnectionMode;
  timeoutMs: number;
  events: McpEvents;
}

/** One `tools/call` through {@link McpConnections.callTool}. */
export interface McpToolCall {
  /** The server's name of the tool. */
  name: string;
  args: Record<string, unknown>;
  sessionId: string;
  ids: McpEventIds;
  signal: AbortSignal;
}

/**
 * The connections of one MCP toolset: made per call (connect, use, close) or pooled per session until released;
 * every open one is tracked so `close()` ends them all. `tool.mcp.connect` and `tool.mcp.close` are emitted
 * here.
 */
export class McpConnections {
  private readonly pool = new Map<string, Promise<Connection>>();
  private readonly open = new Set<Connection>();
  private closedFlag = false;

  constructor(private readonly options: McpConnectionsOptions) {}

  /** Whether `close()` was called: later calls fail. */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** Sessions holding a pooled connection. */
  pooledSessions(): string[] {
    return [...this.pool.keys()];
  }

  /** Connections open now (pooled and in-flight per-call ones). */
  openCount(): number {
    return this.open.size;
  }

  /** Call a tool on the session's pooled connection, or on one of its own in `per_call` mode. */
  callTool(call: McpToolCall): Promise<McpCallResult> {
    const request = { timeout: this.options.timeoutMs, signal: call.signal };
    if (this.options.mode === "pooled") return this.callPooled(call, request);
    return this.withConnection(call.ids, "per_call", (connection) =>
      connection.client.callTool({ name: call.name, arguments: call.args }, undefined, request),
    );
  }

  private async callPooled(
    call: McpToolCall,
    request: { timeout: number; signal: AbortSignal },
  ): Promise<McpCallResult> {
    const { name, args, sessionId, ids } = call;
    const connection = await this.pooled(sessionId, ids);
    try {
      return await connection.client.callTool({ name, arguments: args }, undefined, request);
    } catch (error) {
      // A restarted Streamable HTTP server refuses the session it no longer knows: the request never ran, so
      // reconnect once and send it again.
      if (!isUnknownSession(this.options.sdk.httpStatus(error), (error as Error)?.message ?? "")) throw error;
      await this.dropPooled(sessionId, connection, ids);
      const fresh = await this.pooled(sessionId, ids, true);
      return await fresh.client.callTool({ name, arguments: args }, undefined, request);
    }
  }

  /** The server's tools, all pages: on the session's pooled connection in `pooled` mode, else on one of its own. */
  async listTools(ids: McpEventIds, mode: McpConnectionMode): Promise<McpToolInfo[]> {
    const list = async (connection: Connection) => {
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await connection.client.listTools(cursor === undefined ? {} : { cursor }, {
          timeout: this.options.timeoutMs,
        });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    };
    if (mode === "pooled" && ids.sessionId !== undefined) return list(await this.pooled(ids.sessionId, ids));
    return this.withConnection(ids, "per_call", list);
  }

  /** Close the session's pooled connection. Idempotent. */
  async release(sessionId: string): Promise<void> {
    const pending = this.pool.get(sessionId);
    if (pending === undefined) return;
    this.pool.delete(sessionId);
    const connection = await pending.catch(() => undefined);
    if (connection !== undefined) await this.disconnect(connection, { sessionId });
  }

  /** Close every connection; later ones fail. Idempotent. */
  async close(): Promise<void> {
    this.closedFlag = true;
    const pooled = [...this.pool.values()];
    this.pool.clear();
    await Promise.allSettled(pooled);
    await Promise.allSettled([...this.open].map((connection) => this.disconnect(connection, {})));
  }

  private pooled(sessionId: string, ids: McpEventIds, reconnect = false): Promise<Connection> {
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

  private async dropPooled(sessionId: string, connection: Connection, ids: McpEventIds): Promise<void> {
    const current = this.pool.get(sessionId);
    if (current !== undefined && (await current.catch(() => undefined)) === connection)
      this.pool.delete(sessionId);
    connection.dead = true;
    await this.disconnect(connection, ids);
  }

  private async withConnection<T>(
    ids: McpEventIds,
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

  private async connect(ids: McpEventIds, mode: McpConnectionMode, reconnect: boolean): Promise<Connection> {
    const { toolId, serverLabel, events } = this.options;
    const startedAt = performance.now();
    const client = this.options.sdk.createClient();
    const transport = this.transport();
    try {
      await client.connect(transport, { timeout: this.options.timeoutMs });
    } catch (error) {
      await transport.close().catch(() => undefined);
      events.emit(
        "tool.mcp.connect",
        {
          toolId,
          server: serverLabel,
          mode,
          success: false,
          error: errorCode(error),
          durationMs: performance.now() - startedAt,
        },
        ids,
      );
      throw new ToolError(
        `Could not connect to MCP server ${serverLabel}: ${(error as Error)?.message ?? String(error)}`,
        {
          cause: error,
          retryable: true,
          hint:
            this.options.server.transport === "stdio"
              ? "Check the server's command, args and env; run it by hand to see its error"
              : "Check the server's URL and headers and that it is running",
          context: { toolId },
        },
      );
    }
    const connection: Connection = { client, transport, mode, dead: false };
    client.onclose = () => {
      connection.dead = true;
      this.open.delete(connection);
    };
    this.open.add(connection);
    if (this.closedFlag) {
      await this.disconnect(connection, ids);
      throw new ToolError(`MCP toolset '${toolId}' is closed`, { hint: "The runtime was closed" });
    }
    const payload: Record<string, unknown> = {
      toolId,
      server: serverLabel,
      mode,
      success: true,
      durationMs: performance.now() - startedAt,
    };
    if (reconnect) payload.reconnect = true;
    events.emit("tool.mcp.connect", payload, ids);
    return connection;
  }

  private disconnect(connection: Connection, ids: McpEventIds): Promise<void> {
    connection.closing ??= (async () => {
      const startedAt = performance.now();
      connection.dead = true;
      // A Streamable HTTP session is ended on the server too (a 405 from servers that refuse is fine).
      if (typeof connection.transport.terminateSession === "function" && connection.transport.sessionId) {
        await withTimeout(connection.transport.terminateSession(), 2000).catch(() => undefined);
      }
      await connection.client.close().catch(() => undefined);
      this.open.delete(connection);
      this.options.events.emit(
        "tool.mcp.close",
        {
          toolId: this.options.toolId,
          server: this.options.serverLabel,
          mode: connection.mode,
          durationMs: performance.now() - startedAt,
        },
        ids,
      );
    })();
    return connection.closing;
  }

  private transport(): McpTransportLike {
    const { server, sdk } = this.options;
    if (server.transport === "stdio") {
      const params: Parameters<McpSdk["stdioTransport"]>[0] = {
        command: server.command,
        args: server.args ?? [],
        stderr: server.stderr ?? "inherit",
      };
      if (server.env !== undefined) params.env = server.env;
      if (server.cwd !== undefined) params.cwd = server.cwd;
      return sdk.stdioTransport(params);
    }
    return sdk.httpTransport(
      new URL(server.url),
      server.headers ? { requestInit: { headers: server.headers } } : {},
    );
  }
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
