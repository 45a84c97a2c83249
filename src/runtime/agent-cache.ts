import type { AgentDefinition, AppConfig } from "../config/app-config-schema.js";
import { nearMatch } from "../config/near-match.js";
import { ConfigError } from "../errors/error-classes.js";
import { getLogger } from "../logging/logger.js";
import type { ResolvedAgent } from "../loop/resolved-agent.js";
import { isPluginRef } from "../plugins/load-plugin.js";
import type { LiveRun } from "./live-runs.js";
import { loadAgent } from "./load-agent.js";

export interface AgentCacheOptions {
  /** The config as it is now (`reload` replaces it). */
  config(): AppConfig;
  baseDir: string;
  /** The runtime agents load against (agent tools start child runs through it). */
  runtime: Parameters<typeof loadAgent>[1]["runtime"];
  /** The runs this process is executing: a dropped agent's resources close only once its runs have ended. */
  liveRuns(): Iterable<LiveRun>;
}

/**
 * The agents a runtime has loaded, one load per agent shared by its runs: what `resolve` loads, `invalidate`
 * drops and closes, `releaseSession` and `closeAll` walk.
 */
export class AgentCache {
  private readonly agents = new Map<string, Promise<ResolvedAgent>>();

  constructor(private readonly options: AgentCacheOptions) {}

  /** The loaded agent; an unknown id is a `ConfigError` with a near match. */
  resolve(agentId: string): Promise<ResolvedAgent> {
    let agent = this.agents.get(agentId);
    if (agent) return agent;
    const config = this.options.config();
    const definition = config.agents.find((candidate) => candidate.id === agentId);
    if (!definition) {
      const ids = config.agents.map((candidate) => candidate.id);
      const suggestion = nearMatch(agentId, ids);
      return Promise.reject(
        new ConfigError(`Unknown agent id: '${agentId}'`, {
          hint: `${suggestion ? `Did you mean '${suggestion}'? ` : ""}Available agent ids: ${ids.join(", ")}`,
        }),
      );
    }
    const runtimeConfig = config.runtime.config as { tool_executor?: unknown; context_assembler?: unknown };
    agent = loadAgent(definition, {
      baseDir: this.options.baseDir,
      runtime: this.options.runtime,
      defaults: {
        toolExecutor: runtimeConfig.tool_executor,
        contextAssembler: runtimeConfig.context_assembler,
      },
    });
    this.agents.set(agentId, agent);
    agent.catch(() => this.agents.delete(agentId));
    return agent;
  }

  has(agentId: string): boolean {
    return this.agents.has(agentId);
  }

  /**
   * Drop the agent; the next run loads it again. What the old agent opened (its memory, the tools its config
   * entries loaded — an MCP toolset's pooled connections and servers —, its tool executor) is closed once the runs
   * already using it have ended, and this resolves then; tools and executors given as objects in a code-first
   * config are the caller's and stay open (the next load reuses them).
   */
  async invalidate(agentId: string): Promise<void> {
    const agent = this.agents.get(agentId);
    this.agents.delete(agentId);
    const loaded = await agent?.catch(() => undefined);
    if (loaded === undefined) return;
    // Runs started before the drop hold the old agent until they end; closing its tools under them would fail
    // their next calls.
    const using = [...this.options.liveRuns()].filter((live) => live.log.agentId === agentId);
    await Promise.allSettled(using.map((live) => live.done));
    const config = this.options.config();
    const definition = config.agents.find((candidate) => candidate.id === agentId);
    const executorRef =
      definition?.tool_executor ?? (config.runtime.config as { tool_executor?: unknown }).tool_executor;
    const closing: Promise<void>[] = [];
    for (const [name, tool] of Object.entries(loaded.tools)) {
      if (loaded.toolsets?.[name] !== undefined && tool.close) closing.push(tool.close());
    }
    if (executorRef === undefined || isPluginRef(executorRef))
      if (loaded.toolExecutor.close) closing.push(loaded.toolExecutor.close());
    if (loaded.memory.close) closing.push(loaded.memory.close());
    const results = await Promise.allSettled(closing);
    for (const result of results) {
      if (result.status === "rejected")
        getLogger().warn(
          `Closing a resource of agent '${agentId}' failed: ${(result.reason as Error)?.message ?? String(result.reason)}`,
        );
    }
  }

  /** Free what the loaded agents' tools hold for a session (pooled connections). Idempotent. */
  async releaseSession(sessionId: string): Promise<void> {
    for (const loaded of await this.loaded()) {
      for (const tool of Object.values(loaded.tools)) {
        await (tool as { releaseSession?: (id: string) => Promise<void> }).releaseSession?.(sessionId);
      }
    }
  }

  /** Close everything every loaded agent opened: memory, tool executor, tools, model client. */
  async closeAll(): Promise<void> {
    for (const loaded of await this.loaded()) {
      await loaded.memory.close?.();
      await loaded.toolExecutor.close?.();
      for (const tool of Object.values(loaded.tools)) await tool.close?.();
      await loaded.model.close?.();
    }
  }

  /** The agents that loaded; one that failed to load holds nothing. */
  private async loaded(): Promise<ResolvedAgent[]> {
    const loaded: ResolvedAgent[] = [];
    for (const agent of this.agents.values()) {
      const one = await agent.catch(() => undefined);
      if (one !== undefined) loaded.push(one);
    }
    return loaded;
  }
}

/** What `getAgentInfo` tells of an agent: its selectors as configured, and whether it is loaded. */
export interface AgentInfo {
  id: string;
  name: string;
  selectors: Record<string, unknown>;
  loaded: boolean;
}

export function describeAgent(definition: AgentDefinition, loaded: boolean): AgentInfo {
  return {
    id: definition.id,
    name: definition.name,
    selectors: {
      memory: definition.memory,
      pattern: definition.pattern,
      tool_executor: definition.tool_executor ?? null,
      context_assembler: definition.context_assembler ?? null,
      llm: { provider: (definition.llm as { provider?: string } | undefined)?.provider ?? "mock" },
      tools: definition.tools.map(
        (tool) => (tool as { id?: string; name?: string }).id ?? (tool as { name: string }).name,
      ),
    },
    loaded,
  };
}

/**
 * The ids of the agents a reloaded config adds, removes or changes. A change of the top-level components is a
 * `ConfigError`: they are not swapped while the runtime lives.
 */
export function changedAgentIds(before: AppConfig, after: AppConfig): string[] {
  for (const key of ["runtime", "session", "events"] as const) {
    if (JSON.stringify(after[key]) !== JSON.stringify(before[key])) {
      throw new ConfigError("Hot reload does not support changing top-level runtime/session/events", {
        hint: "Restart the process to change top-level components",
      });
    }
  }
  const old = new Map(before.agents.map((agent) => [agent.id, JSON.stringify(agent)]));
  return [...new Set([...old.keys(), ...after.agents.map((agent) => agent.id)])].filter(
    (id) => old.get(id) !== JSON.stringify(after.agents.find((agent) => agent.id === id)),
  );
}
