import { z } from "zod";
import { DEFAULT_EXECUTION_SPEC, normalizeApprovalMode, type Tool } from "../../contracts/tool.js";
import { PermanentToolError } from "../../errors/error-classes.js";
import { currentHostBridge } from "../../models/providers/host/host-bridge.js";
import type { PluginDefinition } from "../../plugins/plugin-registry.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";

const hostToolConfig = builtOnFirstUse(() =>
  z.object({
    /** The host's name for the tool; the entry's `id` when absent. */
    tool_name: z.string().min(1).optional(),
    description: z.string().default(""),
    /** JSON Schema of the tool's parameters, as the model sees them. */
    parameters: z.record(z.string(), z.unknown()).default({ type: "object", properties: {} }),
    approval_mode: z.enum(["inherit", "never", "always", "never_require", "always_require"]).optional(),
  }),
);

/**
 * `{"id": "lookup", "type": "host_tool", "config": {"description": "…", "parameters": {…}}}`: a tool the host
 * runs. Its calls go through the host run's API proxy, so the host checks and audits each one; outside a host
 * run it fails without being retried.
 */
export const hostToolPlugin: PluginDefinition<Tool> = {
  kind: "tool",
  type: "host_tool",
  get configSchema() {
    return hostToolConfig();
  },
  create: (config, context) => {
    const parsed = hostToolConfig().parse(config);
    const name = context.id ?? parsed.tool_name;
    if (name === undefined) throw new PermanentToolError("a host_tool needs an id or config.tool_name");
    const hostName = parsed.tool_name ?? name;
    const spec = { ...DEFAULT_EXECUTION_SPEC, approvalMode: normalizeApprovalMode(parsed.approval_mode) };
    return {
      name,
      description: parsed.description,
      schema: () => parsed.parameters,
      executionSpec: () => spec,
      invoke: async (params, ctx) => {
        const bridge = currentHostBridge();
        if (!bridge)
          throw new PermanentToolError(`host tool ${hostName} can only be called inside a host run`);
        return bridge.callTool(hostName, params, ctx.signal);
      },
    };
  },
};
