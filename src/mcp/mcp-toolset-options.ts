import path from "node:path";
import type { EventBus } from "../contracts/runtime-event.js";
import type { McpSdk } from "./mcp-sdk.js";

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

export const DEFAULT_MCP_TIMEOUT_MS = 60_000;

/** What the server calls itself in events and messages: never headers, credentials or query strings. */
export function serverLabel(server: McpServerConfig): string {
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
