import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../errors/error-codes.js";
import { checkPathInput } from "./check-path-input.js";

describe("checkPathInput", () => {
  it.each([
    ["a/b.txt", "a/b.txt", false],
    ["./a//b/", "a/b", false],
    ["a/../b", "b", false],
    [".", ".", false],
    ["./", ".", false],
    ["/abs/x/", "/abs/x", true],
    ["/", "/", true],
    ["caf\u00e9/r\u00e9sum\u00e9.md", "caf\u00e9/r\u00e9sum\u00e9.md", false],
    ["notes~/x", "notes~/x", false],
    ["50% done.txt", "50% done.txt", false],
    ["ab:cd", "ab:cd", false],
  ])("accepts %j as %j", (input, normalized, absolute) => {
    expect(checkPathInput(input, "t")).toEqual({ given: input, normalized, absolute });
  });

  it.each([
    [42, "the path must be a string"],
    [null, "the path must be a string"],
    ["", "the path is empty"],
    ["a\u0000b", "NUL byte"],
    ["a\u0007", "control character"],
    ["a\u200db", "invisible formatting character"],
    ["a\\b", "backslashes"],
    ["D:x", "drive letters"],
    ["https://x/y", "URLs"],
    ["~", "'~' is not expanded"],
    ["%41", "URL-encoded"],
    ["a\u2215b", "look-alike of '/'"],
    ["a\u2026", "U+2026"],
  ])("refuses %j: %s", (input, reason) => {
    let caught: unknown;
    try {
      checkPathInput(input, "read_file");
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: ERROR_CODES.SANDBOX_INVALID_PATH, rule: "invalid_path" });
    expect((caught as Error).message).toContain(reason);
    expect((caught as Error).message).toMatch(/^read_file: /);
  });

  it("shows invisible characters as escapes in its message", () => {
    expect(() => checkPathInput("a\u202eb", "t")).toThrow("a\\u202eb");
  });

  it("refuses a relative path that climbs out, as outside the sandbox", () => {
    expect(() => checkPathInput("a/../../b", "t")).toThrow(
      expect.objectContaining({ code: ERROR_CODES.SANDBOX_PATH_OUTSIDE, rule: "path_outside_sandbox" }),
    );
  });
});
