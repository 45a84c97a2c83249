import { AsyncLocalStorage } from "node:async_hooks";
import type { ModelRequest, ModelStreamPart } from "../../../contracts/language-model.js";

/**
 * What an agent reaches of the host it runs inside, when Keel serves it as a runner: the host's models and its
 * tools, through the run's API proxy. The runner opens one per host run; `llm.provider: "host"` and `host_tool`
 * tools find the current run's bridge here, so the same loaded agent serves every host run.
 */
export interface HostBridge {
  /** One model call through the host; `modelId` is the agent's `llm.model`, or the run's first granted model. */
  streamModel(request: ModelRequest, modelId: string | undefined): AsyncIterable<ModelStreamPart>;
  /** One tool call through the host; resolves to the tool's result. */
  callTool(toolName: string, parameters: Record<string, unknown>, signal?: AbortSignal): Promise<unknown>;
  /** One search of a host knowledge base; `kbId` is the tool's, or the run's first granted knowledge base. */
  retrieveKnowledge?(
    kbId: string | undefined,
    query: string,
    options: { topK: number; filters?: Record<string, unknown> },
  ): Promise<unknown[]>;
}

const scope = new AsyncLocalStorage<HostBridge>();

/** Runs `work` with `bridge` as the current host bridge of everything it starts. */
export function runWithHostBridge<T>(bridge: HostBridge, work: () => T): T {
  return scope.run(bridge, work);
}

/** The bridge of the host run this code runs in, if any. */
export function currentHostBridge(): HostBridge | undefined {
  return scope.getStore();
}
