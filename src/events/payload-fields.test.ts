import { describe, expect, it } from "vitest";
import {
  anyValue,
  bool,
  either,
  list,
  named,
  num,
  oneOf,
  orNull,
  record,
  str,
  typed,
} from "./payload-fields.js";

describe("payload field markers", () => {
  it("name the type as TypeScript writes it", () => {
    expect([str, num, bool, anyValue, record].map((field) => field.name)).toEqual([
      "string",
      "number",
      "boolean",
      "unknown",
      "object",
    ]);
    expect(list(str).name).toBe("string[]");
    expect(oneOf("ok", "error").name).toBe('"ok" | "error"');
    expect(orNull(str).name).toBe("string | null");
    expect(either(bool, oneOf("session")).name).toBe('boolean | "session"');
    expect(named("ResumeMode", oneOf("a", "b")).name).toBe("ResumeMode");
    expect(typed("RunResult").name).toBe("RunResult");
  });

  it("check a value shallowly", () => {
    expect([str.is("x"), str.is(1), num.is(1), num.is("1"), bool.is(false), bool.is(0)]).toEqual([
      true,
      false,
      true,
      false,
      true,
      false,
    ]);
    expect([anyValue.is(undefined), record.is({}), record.is([]), record.is(null)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect([list(str).is(["a"]), list(str).is(["a", 1]), list(str).is("a")]).toEqual([true, false, false]);
    expect([oneOf("ok", "error").is("ok"), oneOf("ok", "error").is("failed")]).toEqual([true, false]);
    expect([orNull(str).is(null), orNull(str).is(undefined)]).toEqual([true, false]);
    expect([either(bool, oneOf("session")).is("session"), either(bool, oneOf("session")).is("run")]).toEqual([
      true,
      false,
    ]);
    expect([typed("RunResult").is({ runId: "r" }), typed("RunResult").is("r")]).toEqual([true, false]);
  });

  it("are frozen values", () => {
    expect(Object.isFrozen(str)).toBe(true);
    expect(Object.isFrozen(list(num))).toBe(true);
  });
});
