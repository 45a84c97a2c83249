import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentMiddleware,
  defineAgent,
  defineTool,
  type FunctionMiddleware,
  Runtime,
  type ToolContext,
} from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";

/** A run's `deps` reach its tools and middleware as they were given, typed by the agent's tools. */

interface Deps {
  accounts: Map<string, number>;
  user: string;
}

describe("a run's deps", () => {
  it("reach the tools' context, function middleware and agent middleware, per run", async () => {
    const seen: string[] = [];
    const balance = defineTool({
      name: "balance",
      description: "The user's balance",
      inputSchema: z.object({}),
      execute: (_input, ctx: ToolContext<Deps>) => ctx.deps.accounts.get(ctx.deps.user) ?? 0,
    });
    const tagCall: FunctionMiddleware<Deps> = async (ctx, next) => {
      seen.push(`call by ${ctx.deps.user}`);
      await next();
    };
    const audit: AgentMiddleware<Deps> = async (ctx, next) => {
      seen.push(`run for ${ctx.request.deps?.user}`);
      await next();
    };
    const bank = defineAgent({
      id: "bank",
      name: "Bank",
      tools: [balance],
      middleware: { function: [tagCall], agent: [audit] },
      llm: scriptedModel(
        [
          (request) =>
            request.messages.at(-1)?.role === "tool"
              ? { text: String(request.messages.at(-1)?.content) }
              : { toolCalls: [{ name: "balance", arguments: {} }] },
        ],
        { whenExhausted: "repeat-last" },
      ),
    });
    const runtime = await Runtime.fromDict({ agents: [bank] });
    const accounts = new Map([
      ["ada", 42],
      ["bob", 7],
    ]);
    expect(await runtime.run({ agentId: bank, inputText: "?", deps: { accounts, user: "ada" } })).toBe("42");
    expect(await runtime.run({ agentId: bank, inputText: "?", deps: { accounts, user: "bob" } })).toBe("7");
    expect(seen).toEqual(["run for ada", "call by ada", "run for bob", "call by bob"]);
    await runtime.close();
  });
});
