import { describe, expect, it } from "vitest";
import { ToolError } from "./error-classes.js";
import { isRetryable, KeelError, toErrorDetails } from "./keel-error.js";

describe("KeelError", () => {
  it("keeps code, hint, docsUrl, retryable and context", () => {
    const cause = new Error("socket closed");
    const error = new KeelError("It broke", {
      code: "tool.custom",
      hint: "Try again later",
      docsUrl: "https://example.com/errors/tool.custom",
      retryable: true,
      cause,
      context: { agentId: "a1", sessionId: "s1", runId: "r1", toolId: "t1", step: 2 },
    });
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(KeelError);
    expect(error.name).toBe("KeelError");
    expect(error.message).toBe("It broke");
    expect(error.code).toBe("tool.custom");
    expect(error.hint).toBe("Try again later");
    expect(error.docsUrl).toBe("https://example.com/errors/tool.custom");
    expect(error.retryable).toBe(true);
    expect(error.cause).toBe(cause);
    expect(error.context).toEqual({ agentId: "a1", sessionId: "s1", runId: "r1", toolId: "t1", step: 2 });
  });

  it("has defaults: code error.keel, not retryable, empty context, no hint, docs or cause", () => {
    const error = new KeelError("plain");
    expect(error.code).toBe("error.keel");
    expect(error.retryable).toBe(false);
    expect(error.context).toEqual({});
    expect(error.hint).toBeUndefined();
    expect(error.docsUrl).toBeUndefined();
    expect(error.cause).toBeUndefined();
    expect("cause" in error).toBe(false);
  });

  it("names itself after the subclass", () => {
    class MyError extends KeelError {}
    expect(new MyError("x").name).toBe("MyError");
    expect(new ToolError("x").name).toBe("ToolError");
  });

  it("adds hint: and docs: lines to its string form", () => {
    const error = new KeelError("Bad config", { hint: "Fix the key", docsUrl: "https://keel.dev/e" });
    expect(error.toString()).toBe("KeelError: Bad config\nhint: Fix the key\ndocs: https://keel.dev/e");
    expect(String(new KeelError("only hint", { hint: "h" }))).toBe("KeelError: only hint\nhint: h");
    expect(String(new KeelError("only docs", { docsUrl: "u" }))).toBe("KeelError: only docs\ndocs: u");
    expect(String(new KeelError("bare"))).toBe("KeelError: bare");
  });

  describe("isInstance", () => {
    it("is true for Keel errors and their subclasses", () => {
      expect(KeelError.isInstance(new KeelError("x"))).toBe(true);
      expect(KeelError.isInstance(new ToolError("x"))).toBe(true);
    });

    it("is true for a plain object carrying the Symbol.for brand (another copy of the package)", () => {
      const foreign = { [Symbol.for("keel.error")]: true, code: "x.y", message: "m" };
      expect(KeelError.isInstance(foreign)).toBe(true);
    });

    it("is false for other values", () => {
      expect(KeelError.isInstance(new Error("x"))).toBe(false);
      expect(KeelError.isInstance({ code: "x.y", retryable: true })).toBe(false);
      expect(KeelError.isInstance({ [Symbol("keel.error")]: true })).toBe(false);
      expect(KeelError.isInstance({ [Symbol.for("keel.error")]: "yes" })).toBe(false);
      expect(KeelError.isInstance(null)).toBe(false);
      expect(KeelError.isInstance(undefined)).toBe(false);
      expect(KeelError.isInstance("KeelError")).toBe(false);
    });
  });
});

describe("isRetryable", () => {
  it("is true only for retryable === true", () => {
    expect(isRetryable(new KeelError("x", { retryable: true }))).toBe(true);
    expect(isRetryable(new KeelError("x"))).toBe(false);
    expect(isRetryable(Object.assign(new Error("user"), { retryable: true }))).toBe(true);
    expect(isRetryable({ retryable: "true" })).toBe(false);
    expect(isRetryable({ retryable: 1 })).toBe(false);
    expect(isRetryable(new Error("x"))).toBe(false);
    expect(isRetryable(null)).toBe(false);
    expect(isRetryable("retryable")).toBe(false);
  });
});

describe("toErrorDetails", () => {
  it("serialises a Keel error with the first line of its message, hint, retryable and a copy of the context", () => {
    const context = { runId: "r1", step: 3 };
    const error = new KeelError("first line\nsecond line\nthird", {
      code: "llm.connection",
      hint: "Check the network",
      retryable: true,
      context,
    });
    const details = toErrorDetails(error);
    expect(details).toEqual({
      code: "llm.connection",
      message: "first line",
      hint: "Check the network",
      retryable: true,
      context: { runId: "r1", step: 3 },
    });
    expect(details.context).not.toBe(error.context);
    expect("hint" in toErrorDetails(new KeelError("x"))).toBe(false);
    expect("cause" in toErrorDetails(new KeelError("x"))).toBe(false);
  });

  it("maps non-Keel errors to error.unknown", () => {
    expect(toErrorDetails(new TypeError("bad\nmore"))).toEqual({
      code: "error.unknown",
      message: "bad",
      retryable: false,
      context: {},
    });
    expect(toErrorDetails(new RangeError(""))).toEqual({
      code: "error.unknown",
      message: "RangeError",
      retryable: false,
      context: {},
    });
    expect(toErrorDetails(Object.assign(new Error("busy"), { retryable: true })).retryable).toBe(true);
    expect(toErrorDetails("just a string")).toEqual({
      code: "error.unknown",
      message: "just a string",
      retryable: false,
      context: {},
    });
    expect(toErrorDetails(42)).toEqual({
      code: "error.unknown",
      message: "42",
      retryable: false,
      context: {},
    });
  });

  it("follows the cause chain three levels deep", () => {
    const level4 = new Error("level 4");
    const level3 = new Error("level 3", { cause: level4 });
    const level2 = new KeelError("level 2", { code: "b.two", cause: level3 });
    const level1 = new KeelError("level 1", { code: "a.one", cause: level2 });
    const top = new KeelError("top", { code: "top.zero", cause: level1 });
    const details = toErrorDetails(top);
    expect(details).toEqual({
      code: "top.zero",
      message: "top",
      retryable: false,
      context: {},
      cause: {
        code: "a.one",
        message: "level 1",
        retryable: false,
        context: {},
        cause: {
          code: "b.two",
          message: "level 2",
          retryable: false,
          context: {},
          cause: { code: "error.unknown", message: "level 3", retryable: false, context: {} },
        },
      },
    });
  });

  it("follows the cause of a non-Keel error and a non-Error cause", () => {
    const details = toErrorDetails(new Error("outer", { cause: "inner reason" }));
    expect(details.cause).toEqual({
      code: "error.unknown",
      message: "inner reason",
      retryable: false,
      context: {},
    });
  });
});
