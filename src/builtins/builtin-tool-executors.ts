import type { z } from "zod";
import type { ToolExecutor } from "../contracts/tool.js";
import { registerBuiltin } from "../plugins/plugin-registry.js";
import { createSandboxProvider, sandboxSettingsFromConfig } from "../sandbox/sandbox-provider.js";
import {
  ConcurrentBatchToolExecutor,
  concurrentBatchToolExecutorConfigSchema,
} from "../tools/executors/concurrent-batch-tool-executor.js";
import {
  FilesystemAwareToolExecutor,
  filesystemAwareToolExecutorConfigSchema,
} from "../tools/executors/filesystem-aware-tool-executor.js";
import { RetryToolExecutor, retryToolExecutorConfigSchema } from "../tools/executors/retry-tool-executor.js";
import { SafeToolExecutor, safeToolExecutorConfigSchema } from "../tools/executors/safe-tool-executor.js";

let registered = false;

/** Register `safe`, `retry`, `concurrent_batch` (alias `concurrent`) and `filesystem_aware`. */
export function registerToolExecutorBuiltins(): void {
  if (registered) return;
  registered = true;
  registerBuiltin({
    kind: "tool_executor",
    type: "safe",
    get configSchema() {
      return safeToolExecutorConfigSchema();
    },
    create: (config) => new SafeToolExecutor(config),
  });
  registerBuiltin({
    kind: "tool_executor",
    type: "retry",
    get configSchema() {
      return retryToolExecutorConfigSchema();
    },
    create: async (config, context) => {
      const { inner, ...options } = config as z.output<ReturnType<typeof retryToolExecutorConfigSchema>>;
      return new RetryToolExecutor({
        ...options,
        inner: await context.load<ToolExecutor>("tool_executor", inner),
      });
    },
  });
  registerBuiltin({
    kind: "tool_executor",
    type: "filesystem_aware",
    get configSchema() {
      return filesystemAwareToolExecutorConfigSchema();
    },
    create: async (config, context) => {
      const parsed = config as z.output<ReturnType<typeof filesystemAwareToolExecutorConfigSchema>>;
      // The same sandbox the filesystem tools get: the agent's roots, else each run's workspace.
      const sandbox = createSandboxProvider(
        sandboxSettingsFromConfig(context.agent?.sandbox, context.baseDir),
      );
      return new FilesystemAwareToolExecutor({
        inner: await context.load<ToolExecutor>("tool_executor", parsed.inner),
        sandbox,
        ...(parsed.path_arguments === undefined ? {} : { pathArguments: parsed.path_arguments }),
      });
    },
  });
  for (const type of ["concurrent_batch", "concurrent"]) {
    registerBuiltin({
      kind: "tool_executor",
      type,
      get configSchema() {
        return concurrentBatchToolExecutorConfigSchema();
      },
      create: async (config, context) => {
        const inner = await context.load<ToolExecutor>("tool_executor", config.inner);
        return new ConcurrentBatchToolExecutor(inner, config.max_concurrency as number);
      },
    });
  }
}
