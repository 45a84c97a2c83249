import { describe, expect, it } from "vitest";
import { isMiddleware } from "../contracts/middleware.js";
import { KeelError } from "../errors/keel-error.js";
import { MiddlewareTermination } from "./middleware-termination.js";

describe("MiddlewareTermination", () => {
  it("is an Error with a code, a name and an optional result", () => {
    const bare = new MiddlewareTermination();
    expect(bare).toBeInstanceOf(Error);
    expect(bare.name).toBe("MiddlewareTermination");
    expect(bare.code).toBe("middleware.terminated");
    expect(bare.message).toBe("Middleware ended the chain");
    expect(bare.hasResult).toBe(false);
    const withResult = new MiddlewareTermination({ result: { ok: true }, message: "done" });
    expect(withResult.result).toEqual({ ok: true });
    expect(withResult.hasResult).toBe(true);
    expect(withResult.message).toBe("done");
    expect(new MiddlewareTermination({ result: null }).hasResult).toBe(true);
  });

  it("is recognised by brand, and is not a KeelError (never a run's failure)", () => {
    const termination = new MiddlewareTermination();
    expect(MiddlewareTermination.isInstance(termination)).toBe(true);
    expect(MiddlewareTermination.isInstance({ [Symbol.for("keel.middlewareTermination")]: true })).toBe(true);
    expect(MiddlewareTermination.isInstance(new Error("x"))).toBe(false);
    expect(MiddlewareTermination.isInstance(null)).toBe(false);
    expect(KeelError.isInstance(termination)).toBe(false);
  });
});

describe("isMiddleware", () => {
  it("accepts functions and objects with process()", () => {
    expect(isMiddleware(() => {})).toBe(true);
    expect(isMiddleware({ process() {} })).toBe(true);
    expect(isMiddleware({ process: 1 })).toBe(false);
    expect(isMiddleware(null)).toBe(false);
    expect(isMiddleware("x")).toBe(false);
  });
});
