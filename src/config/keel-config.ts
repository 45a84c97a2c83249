import type { z } from "zod";
import type { OutputType } from "../contracts/run-types.js";
import type { Tool, ToolContext } from "../contracts/tool.js";
import type { agentDefinitionSchema, appConfigSchema, toolRefSchema } from "./app-config-schema.js";

/**
 * One agent as code writes it: what `agentDefinitionSchema()` accepts, keys snake_case as in `agent.json`. Every
 * object is strict, so a misspelt key (`nmae`) or value (`provider: "openai_compatble"`) does not compile; only
 * `llm` takes extra keys, which it sends to the provider.
 */
export type AgentConfig = z.input<ReturnType<typeof agentDefinitionSchema>>;

/** A whole config as code writes it, what `Runtime.fromDict` takes: `{ agents: [...] }` alone is complete. */
export type KeelConfig = Omit<z.input<ReturnType<typeof appConfigSchema>>, "agents"> & {
  agents: readonly AgentConfig[];
};

/**
 * An agent from `defineAgent`: named as a run's `agentId`, its `output_type` types the run's output (`T`) and
 * its tools' context the run's `deps` (`TDeps`).
 */
export type DefinedAgent<T = string, TDeps = unknown> = Omit<AgentConfig, "output_type" | "tools"> & {
  readonly output_type?: OutputType<T> | undefined;
  tools?: (z.input<ReturnType<typeof toolRefSchema>> | ToolOfAgent<TDeps>)[];
  /** Types only, never set: the `deps` the agent's tools read. */
  readonly "~deps"?: TDeps | undefined;
};

/**
 * A tool of an agent whose runs give `TDeps`. `invoke` is written as a property, not a method, so that `TDeps` is
 * inferred from every tool's context (the deps all of them read) and a tool reading other deps does not fit.
 */
type ToolOfAgent<TDeps> = Omit<Tool, "invoke"> & {
  invoke: (params: never, ctx: ToolContext<TDeps>) => unknown;
};

/**
 * Define an agent in code, checked as `KeelConfig` checks it, keeping the types of its `output_type` and of the
 * `deps` its tools read: put it in `agents`, and a run that names it (`runtime.run({ agentId: agent, … })`) has
 * its output typed and its `deps` checked. Returns `agent` itself.
 *
 * @example
 * const math = defineAgent({ id: "math", name: "Math", tools: [add], output_type: z.object({ sum: z.number() }) });
 * const runtime = await Runtime.fromDict({ agents: [math] });
 * const { sum } = await runtime.run({ agentId: math, inputText: "2 + 40?" });
 */
export function defineAgent<T = string, TDeps = unknown>(
  agent: DefinedAgent<T, TDeps>,
): DefinedAgent<T, TDeps> {
  return agent;
}
