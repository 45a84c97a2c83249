import path from "node:path";
import { z } from "zod";
import type { EventBus } from "../contracts/runtime-event.js";
import { ConfigError, PluginLoadError } from "../errors/error-classes.js";
import type { PluginDefinition, PluginFactoryContext } from "../plugins/plugin-registry.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";
import { MCP_SDK_PACKAGE } from "./mcp-sdk.js";
import { McpToolset } from "./mcp-toolset.js";
import {
  DEFAULT_MCP_TIMEOUT_MS,
  type McpServerConfig,
  type McpToolsetOptions,
  serverLabel,
} from "./mcp-toolset-options.js";
import { UnreachableMcpTool, type UnreachableMcpToolOptions } from "./unreachable-mcp-tool.js";

/** The config of `{"type": "mcp"}`. */
export const mcpToolConfigSchema = builtOnFirstUse(() => {
  const stringRecord = z.record(z.string(), z.string());
  return z
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
      /** The older name for `connection`, still accepted. */
      connection_mode: z.enum(["per_call", "pooled"]).optional(),
      probe_on_preflight: z.boolean().default(false),
      dedup_inflight: z.boolean().default(true),
      timeout_ms: z.number().int().positive().default(DEFAULT_MCP_TIMEOUT_MS),
      name_prefix: z.string().optional(),
    })
    .refine(
      (config) =>
        !(config.connection && config.connection_mode && config.connection !== config.connection_mode),
      {
        message: '"connection" and "connection_mode" disagree; give one',
      },
    );
});

/** `{"id": "fs", "type": "mcp", "config": {"server": {...}, "tools": [...], "connection": "pooled"}}`. */
export const mcpToolPlugin: PluginDefinition<McpToolset | UnreachableMcpTool> = {
  kind: "tool",
  type: "mcp",
  get configSchema() {
    return mcpToolConfigSchema();
  },
  requiresPackage: MCP_SDK_PACKAGE,
  create: async (raw, context) => {
    const config = raw as z.output<ReturnType<typeof mcpToolConfigSchema>>;
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
