import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { OutputType } from "../contracts/run-types.js";
import { type AgentConfig, type DefinedAgent, defineAgent, type KeelConfig } from "./keel-config.js";

describe("KeelConfig and defineAgent", () => {
  it("accept what the config schema accepts, code-first objects included", () => {
    const config = {
      agents: [
        {
          id: "a",
          name: "A",
          llm: { provider: "openai_compatible", api_base: "http://localhost:11434/v1", seed: 7 },
          tools: [{ id: "fs", type: "filesystem" }],
          runtime: { max_steps: 4 },
          stop_conditions: [{ type: "max_rounds", rounds: 3 }],
          output_type: z.object({ n: z.number() }),
        },
      ],
      session: { type: "jsonl_file", config: { root_dir: "./runs" } },
    } satisfies KeelConfig;
    expectTypeOf(config).toExtend<KeelConfig>();
  });

  it("refuse a misspelt key or value", () => {
    // @ts-expect-error `nmae` is not a key of an agent
    const misspeltKey: KeelConfig = { agents: [{ id: "a", nmae: "A" }] };
    const misspeltProvider: KeelConfig = {
      // @ts-expect-error no such provider
      agents: [{ id: "a", name: "A", llm: { provider: "openai_compatble" } }],
    };
    const misspeltStop: AgentConfig = {
      id: "a",
      name: "A",
      // @ts-expect-error a stop condition's type is one of the builtin ones
      stop_conditions: [{ type: "max_round", rounds: 1 }],
    };
    // @ts-expect-error every agent has a name
    defineAgent({ id: "a" });
    // @ts-expect-error `nmae` again, through defineAgent
    defineAgent({ id: "a", name: "A", nmae: "B" });
    // @ts-expect-error agents is required
    const empty: KeelConfig = {};
    expectTypeOf([misspeltKey, misspeltProvider, misspeltStop, empty]).toBeArray();
  });

  it("defineAgent keeps the output type, a string when there is none", () => {
    const typed = defineAgent({ id: "m", name: "M", output_type: z.object({ sum: z.number() }) });
    expectTypeOf(typed).toEqualTypeOf<DefinedAgent<{ sum: number }>>();
    expectTypeOf(typed.output_type).toEqualTypeOf<OutputType<{ sum: number }> | undefined>();
    expectTypeOf(defineAgent({ id: "p", name: "P" })).toEqualTypeOf<DefinedAgent<string>>();
    expectTypeOf(typed).toExtend<AgentConfig>();
  });
});
