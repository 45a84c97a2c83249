import { z } from "zod";
import { type PluginDefinition, registerBuiltin } from "../plugins/plugin-registry.js";
import {
  DEFAULT_GENERATED_SESSION_TTL_MS,
  DEFAULT_MAX_RUN_LOGS,
  DEFAULT_MAX_RUNS,
  DEFAULT_MAX_SESSIONS,
  InMemorySessionManager,
} from "../sessions/in-memory-session-manager.js";
import type { SessionManager } from "../sessions/session-manager.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";

/** Config of the `in_memory` session manager. */
export const inMemorySessionManagerConfig = builtOnFirstUse(() =>
  z.object({
    max_run_logs: z.number().int().positive().default(DEFAULT_MAX_RUN_LOGS),
    max_runs: z.number().int().positive().default(DEFAULT_MAX_RUNS),
    max_sessions: z.number().int().positive().default(DEFAULT_MAX_SESSIONS),
    generated_session_ttl_ms: z.number().int().nonnegative().default(DEFAULT_GENERATED_SESSION_TTL_MS),
  }),
);

const inMemorySessionManager: PluginDefinition<SessionManager> = {
  kind: "session",
  type: "in_memory",
  get configSchema() {
    return inMemorySessionManagerConfig();
  },
  create(config) {
    return new InMemorySessionManager({
      maxRunLogs: config.max_run_logs as number,
      maxRuns: config.max_runs as number,
      maxSessions: config.max_sessions as number,
      generatedSessionTtlMs: config.generated_session_ttl_ms as number,
    });
  },
};

/** Register the `in_memory` session manager; calling it again changes nothing. */
export function registerSessionBuiltins(): void {
  registerBuiltin(inMemorySessionManager);
}
