import { z } from "zod";
import { type PluginDefinition, registerBuiltin } from "../plugins/plugin-registry.js";
import { InMemorySessionManager } from "../sessions/in-memory-session-manager.js";
import type { SessionManager } from "../sessions/session-manager.js";

/** Config of the `in_memory` session manager. */
export const IN_MEMORY_SESSION_MANAGER_CONFIG = z.object({
  max_run_logs: z.number().int().positive().default(1000),
});

const inMemorySessionManager: PluginDefinition<SessionManager> = {
  kind: "session",
  type: "in_memory",
  configSchema: IN_MEMORY_SESSION_MANAGER_CONFIG,
  create(config) {
    return new InMemorySessionManager({ maxRunLogs: config.max_run_logs as number });
  },
};

/** Register the `in_memory` session manager; calling it again changes nothing. */
export function registerSessionBuiltins(): void {
  registerBuiltin(inMemorySessionManager);
}
