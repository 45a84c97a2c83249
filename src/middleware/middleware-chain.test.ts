import { describe, expect, it } from "vitest";
import type { Middleware } from "../contracts/middleware.js";
import { MiddlewareChain, NO_MIDDLEWARE } from "./middleware-chain.js";

interface Ctx {
  value: number;
  result?: string;
  log: string[];
}

function newCtx(): Ctx {
  return { value: 1, log: [] };
}

function tracing(name: string): Middleware<Ctx> {
  return async (ctx, next) => {
    ctx.log.push(`${name}:before`);
    await next();
    ctx.log.push(`${name}:after`);
  };
}

const callee = (ctx: Ctx) => {
  ctx.log.push("callee");
  ctx.result = `value ${ctx.value}`;
};

describe("MiddlewareChain", () => {
  it("runs the first middleware outermost, around the callee", async () => {
    const chain = new MiddlewareChain([tracing("a"), tracing("b"), tracing("c")]);
    const ctx = newCtx();
    await chain.run(ctx, callee);
    expect(ctx.log).toEqual(["a:before", "b:before", "c:before", "callee", "c:after", "b:after", "a:after"]);
    expect(chain.length).toBe(3);
  });

  it("takes objects with process() as well as functions", async () => {
    class Doubler {
      calls = 0;
      async process(ctx: Ctx, next: () => Promise<void>) {
        this.calls++;
        ctx.value *= 2;
        await next();
      }
    }
    const doubler = new Doubler();
    const ctx = newCtx();
    await new MiddlewareChain<Ctx>([doubler, doubler]).run(ctx, callee);
    expect(ctx.result).toBe("value 4");
    expect(doubler.calls).toBe(2);
  });

  it("lets next() see what the middleware changed, and the middleware see the result after it", async () => {
    const seen: (string | undefined)[] = [];
    const chain = new MiddlewareChain<Ctx>([
      async (ctx, next) => {
        ctx.value = 42;
        seen.push(ctx.result);
        await next();
        seen.push(ctx.result);
      },
    ]);
    const ctx = newCtx();
    await chain.run(ctx, callee);
    expect(seen).toEqual([undefined, "value 42"]);
  });

  it("skips the callee and the inner middleware when next() is not called", async () => {
    const ctx = newCtx();
    await new MiddlewareChain<Ctx>([
      tracing("outer"),
      (inner) => {
        inner.result = "cached";
      },
      tracing("never"),
    ]).run(ctx, callee);
    expect(ctx.result).toBe("cached");
    expect(ctx.log).toEqual(["outer:before", "outer:after"]);
  });

  it("lets a middleware replace the result after next()", async () => {
    const ctx = newCtx();
    await new MiddlewareChain<Ctx>([
      async (inner, next) => {
        await next();
        inner.result = inner.result?.toUpperCase();
      },
    ]).run(ctx, callee);
    expect(ctx.result).toBe("VALUE 1");
  });

  it("runs the rest of the chain again on each next(): a retry", async () => {
    let attempts = 0;
    const ctx = newCtx();
    await new MiddlewareChain<Ctx>([
      async (_ctx, next) => {
        try {
          await next();
        } catch {
          await next();
        }
      },
      tracing("inner"),
    ]).run(ctx, (inner) => {
      attempts++;
      if (attempts === 1) throw new Error("flaky");
      inner.result = "second time";
    });
    expect(attempts).toBe(2);
    expect(ctx.result).toBe("second time");
    expect(ctx.log).toEqual(["inner:before", "inner:before", "inner:after"]);
  });

  it("rejects with what a middleware or the callee throws, also synchronously", async () => {
    const throwing = new MiddlewareChain<Ctx>([
      () => {
        throw new Error("sync");
      },
    ]);
    await expect(throwing.run(newCtx(), callee)).rejects.toThrow("sync");
    const failingCallee = new MiddlewareChain<Ctx>([tracing("a")]);
    await expect(
      failingCallee.run(newCtx(), () => {
        throw new Error("callee");
      }),
    ).rejects.toThrow("callee");
  });

  it("runs the callee alone when empty; NO_MIDDLEWARE has three empty levels", async () => {
    const ctx = newCtx();
    await new MiddlewareChain<Ctx>([]).run(ctx, callee);
    expect(ctx.result).toBe("value 1");
    expect([NO_MIDDLEWARE.agent.length, NO_MIDDLEWARE.chat.length, NO_MIDDLEWARE.function.length]).toEqual([
      0, 0, 0,
    ]);
  });
});
