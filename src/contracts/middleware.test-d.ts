import { describe, expectTypeOf, it } from "vitest";
import type { AgentConfig } from "../config/keel-config.js";
import type { AgentMiddleware, FunctionMiddleware } from "./middleware.js";

interface Deps {
  tenant: string;
}

describe("middleware contexts carry the run's deps type", () => {
  it("types ctx.deps in function middleware and request.deps in agent middleware", () => {
    const tagCall: FunctionMiddleware<Deps> = async (ctx, next) => {
      expectTypeOf(ctx.deps).toEqualTypeOf<Deps>();
      await next();
    };
    const audit: AgentMiddleware<Deps> = {
      async process(ctx, next) {
        expectTypeOf(ctx.request.deps).toEqualTypeOf<Deps | undefined>();
        await next();
      },
    };
    // Typed middleware goes in a config's untyped lists.
    const agent: AgentConfig = { id: "a", name: "A", middleware: { function: [tagCall], agent: [audit] } };
    expectTypeOf(agent).toExtend<AgentConfig>();
  });

  it("leaves deps unknown by default", () => {
    const plain: FunctionMiddleware = (ctx) => {
      expectTypeOf(ctx.deps).toBeUnknown();
    };
    expectTypeOf(plain).toExtend<FunctionMiddleware>();
  });
});
