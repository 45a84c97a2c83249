import type { z } from "zod";
import type { OutputType } from "../contracts/run-types.js";
import type { AgentDefinitionSchema, AppConfigSchema } from "./app-config-schema.js";

/**
 * One agent as code writes it: what `AgentDefinitionSchema` accepts, keys snake_case as in `agent.json`. Every
 * object is strict, so a misspelt key (`nmae`) or value (`provider: "openai_compatble"`) does not compile; only
 * `llm` takes extra keys, which it sends to the provider.
 */
export type AgentConfig = z.input<typeof AgentDefinitionSchema>;

/** A whole config as code writes it, what `Runtime.fromDict` takes: `{ agents: [...] }` alone is complete. */
export type KeelConfig = Omit<z.input<typeof AppConfigSchema>, "agents"> & {
  agents: readonly AgentConfig[];
};

/** An agent from `defineAgent`: named as a run's `agentId`, its `output_type` types the run's output. */
export type DefinedAgent<T = string> = Omit<AgentConfig, "output_type"> & {
  readonly output_type?: OutputType<T> | undefined;
};

/**
 * Define an agent in code, checked as `KeelConfig` checks it, keeping the type of its `output_type`: put it in
 * `agents` and run it with `runtime.run({ agentId: agent, … })` to get its output typed. Returns `agent` itself.
 *
 * @example
 * const math = defineAgent({ id: "math", name: "Math", tools: [add], output_type: z.object({ sum: z.number() }) });
 * const runtime = await Runtime.fromDict({ agents: [math] });
 * const { sum } = await runtime.run({ agentId: math, inputText: "2 + 40?" });
 */
export function defineAgent<T = string>(agent: DefinedAgent<T>): DefinedAgent<T> {
  return agent;
}
