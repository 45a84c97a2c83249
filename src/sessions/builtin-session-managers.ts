import { z } from "zod";
import type { PluginDefinition } from "../plugins/plugin-registry.js";
import { registerBuiltin } from "../plugins/plugin-registry.js";
import { InMemorySessionManager } from "./in-memory-session-manager.js";
import type { SessionManager } from "./session-manager.js";

/** Config of the `in_memory` session manager; it has no options. */
export const IN_MEMORY_SESSION_MANAGER_CONFIG = z.object({});

const inMemorySessionManager: PluginDefinition<SessionManager> = {
  kind: "session",
  type: "in_memory",
  configSchema: IN_MEMORY_SESSION_MANAGER_CONFIG,
  create() {
    return new InMemorySessionManager();
  },
};

/** Register the `in_memory` session manager; calling it again changes nothing. */
export function registerSessionBuiltins(): void {
  registerBuiltin(inMemorySessionManager);
}
