import type { AppConfig } from "../../config/app-config-schema.js";
import type { Runtime } from "../../runtime/runtime.js";
import { InMemorySessionManager } from "../../sessions/in-memory-session-manager.js";

/** The run `keel run` is about to start, as far as its notices care. */
export interface RunNoticeInput {
  config: AppConfig;
  runtime: Runtime;
  agentId: string;
  durable: boolean;
}

/**
 * What `keel run` says on stderr before a run whose config is legal but probably not what was meant: a durable
 * run in a store that dies with the process, or an agent without `llm` running on the offline echo model.
 */
export function runNotices({ config, runtime, agentId, durable }: RunNoticeInput): string[] {
  const notices: string[] = [];
  if (durable && runtime.sessionManager instanceof InMemorySessionManager) {
    notices.push(
      "[keel] warning: --durable on the in_memory session store: its checkpoints live in this process only, so " +
        "nothing can resume the run after keel exits; configure a jsonl_file, sqlite or postgres session store " +
        "(docs/stores.md)",
    );
  }
  const agent = config.agents.find((candidate) => candidate.id === agentId);
  if (agent !== undefined && agent.llm === undefined) {
    notices.push(
      `[keel] note: agent '${agentId}' has no "llm", so it runs on the offline mock model 'mock-echo', which ` +
        'echoes the input (and calls a tool for "/tool <id> <query>"); set "llm" to use a real model',
    );
  }
  return notices;
}
