import { describe, expect, it } from "vitest";
import { builtOnFirstUse } from "./built-on-first-use.js";

describe("builtOnFirstUse", () => {
  it("builds nothing until asked, then builds once and keeps the value", () => {
    let builds = 0;
    const value = builtOnFirstUse(() => ({ n: ++builds }));
    expect(builds).toBe(0);
    const first = value();
    expect(value()).toBe(first);
    expect(builds).toBe(1);
  });

  it("keeps a value that is undefined without building it again", () => {
    let builds = 0;
    const value = builtOnFirstUse(() => {
      builds++;
      return undefined;
    });
    value();
    value();
    expect(builds).toBe(1);
  });

  it("builds again after a build that threw, and the error reaches the caller", () => {
    let attempts = 0;
    const value = builtOnFirstUse(() => {
      attempts++;
      if (attempts === 1) throw new Error("first build fails");
      return attempts;
    });
    expect(() => value()).toThrow("first build fails");
    expect(value()).toBe(2);
  });
});
