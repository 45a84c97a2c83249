import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { Tool, ToolContext } from "../contracts/tool.js";
import { defineTool } from "./define-tool.js";

interface Deps {
  db: { get(id: string): Promise<string> };
}

describe("defineTool and the run's deps", () => {
  it("types ctx.deps from the handler's annotated context, and the input from the schema", () => {
    const lookup = defineTool({
      name: "lookup",
      description: "Look a record up",
      inputSchema: z.object({ id: z.string() }),
      execute: ({ id }, ctx: ToolContext<Deps>) => {
        expectTypeOf(id).toEqualTypeOf<string>();
        expectTypeOf(ctx.deps).toEqualTypeOf<Deps>();
        return ctx.deps.db.get(id);
      },
    });
    expectTypeOf(lookup).toEqualTypeOf<Tool<{ id: string }, string, Deps>>();
  });

  it("takes TDeps as its third type argument", () => {
    const tool = defineTool<Record<string, unknown>, string, Deps>({
      name: "t",
      description: "",
      execute: (_input, ctx) => {
        expectTypeOf(ctx.deps.db).toEqualTypeOf<Deps["db"]>();
        return "";
      },
    });
    expectTypeOf(tool).toExtend<Tool<Record<string, unknown>, string, Deps>>();
  });

  it("leaves deps unknown for a tool that does not say, so reading them needs a check", () => {
    defineTool({
      name: "plain",
      description: "",
      execute: (_input, ctx) => {
        expectTypeOf(ctx.deps).toBeUnknown();
        // @ts-expect-error deps of unknown type
        ctx.deps.db;
        return "";
      },
    });
  });

  it("fits a tool with typed deps where any tool goes", () => {
    const typed = defineTool({ name: "t", description: "", execute: (_input, _ctx: ToolContext<Deps>) => 1 });
    expectTypeOf(typed).toExtend<Tool>();
  });
});
