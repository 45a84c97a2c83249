import { z } from "zod";
import type { Tool } from "../../contracts/tool.js";
import type { PluginDefinition, PluginFactoryContext } from "../../plugins/plugin-registry.js";
import { createSandboxProvider, sandboxSettingsFromConfig } from "../../sandbox/sandbox-provider.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";
import type { ProgramToolOptions } from "./run-program.js";

/** The config of the `shell_exec` and `execute_command` tool types (an unknown key is warned about). */
export const programToolConfig = builtOnFirstUse(() => {
  const positiveInt = z.number().int().positive();
  return z.object({
    command_allowlist: z.array(z.string().min(1)).optional(),
    timeout_ms: positiveInt.optional(),
    capture_bytes: positiveInt.optional(),
    env_passthrough: z.array(z.string().min(1)).optional(),
    require_approval: z.boolean().optional(),
  });
});

/**
 * The plugin of a program-running tool type: its config ({@link programToolConfig}) becomes the tool's
 * options, in the agent's sandbox.
 */
export function programToolPlugin(
  type: string,
  create: (options: ProgramToolOptions) => Tool,
): PluginDefinition<Tool> {
  return {
    kind: "tool",
    type,
    get configSchema() {
      return programToolConfig();
    },
    create: (config, context) => create(programToolOptions(config, context)),
  };
}

function programToolOptions(
  config: Record<string, unknown>,
  context: PluginFactoryContext,
): ProgramToolOptions {
  const parsed = programToolConfig().parse(config);
  const options: ProgramToolOptions = {
    sandbox: createSandboxProvider(sandboxSettingsFromConfig(context.agent?.sandbox, context.baseDir)),
  };
  if (parsed.command_allowlist !== undefined) options.commandAllowlist = parsed.command_allowlist;
  if (parsed.timeout_ms !== undefined) options.timeoutMs = parsed.timeout_ms;
  if (parsed.capture_bytes !== undefined) options.captureBytes = parsed.capture_bytes;
  if (parsed.env_passthrough !== undefined) options.envPassthrough = parsed.env_passthrough;
  if (parsed.require_approval !== undefined) options.requireApproval = parsed.require_approval;
  return options;
}
