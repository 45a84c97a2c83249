import { describe, expect, it } from "vitest";
import { ConfigLoadError } from "../errors/error-classes.js";
import { configValidationError, formatConfigError, formatConfigPath } from "./config-issues.js";

describe("formatConfigPath", () => {
  it("dots keys, brackets indices and quotes keys that are not identifiers", () => {
    expect(formatConfigPath(["agents", 0, "runtime", "max_steps"])).toBe("agents[0].runtime.max_steps");
    expect(formatConfigPath(["extra_headers", "X-Team"])).toBe('extra_headers["X-Team"]');
    expect(formatConfigPath([])).toBe("");
  });
});

describe("configValidationError", () => {
  it("leads with the first issue and counts the others", () => {
    const error = configValidationError([
      { path: "agents[0].toolz", message: "unknown key 'toolz'", hint: "Did you mean 'tools'?" },
      { path: "", message: "expected an object, got an array" },
    ]);
    expect(error.message).toBe("agents[0].toolz: unknown key 'toolz' (and 1 more issue)");
    expect(error.hint).toBe("Did you mean 'tools'?");
    expect(error.issues).toHaveLength(2);
  });

  it("names the root 'config' and gives a hint when the issue has none", () => {
    const error = configValidationError([{ path: "", message: "expected an object, got an array" }], {
      configPath: "/x/agent.json",
    });
    expect(error.message).toBe("config: expected an object, got an array");
    expect(error.hint).toBe("Fix 'config'; every issue is listed in error.issues.");
    expect(error.context.configPath).toBe("/x/agent.json");
  });
});

describe("formatConfigError", () => {
  it("prints a Keel error's string form, other errors by name and message", () => {
    expect(formatConfigError(new ConfigLoadError("gone", { hint: "look" }))).toBe(
      "ConfigLoadError: gone\nhint: look",
    );
    expect(formatConfigError(new TypeError("boom"))).toBe("TypeError: boom");
    expect(formatConfigError("text")).toBe("text");
  });

  it("lists every issue with its hint", () => {
    const error = configValidationError([
      { path: "a", message: "unknown key 'a'", hint: "Did you mean 'b'?" },
      { path: "", message: "bad" },
    ]);
    expect(formatConfigError(error)).toBe(
      [
        "ConfigValidationError: a: unknown key 'a' (and 1 more issue)",
        "hint: Did you mean 'b'?",
        "2 issues:",
        "  - a: unknown key 'a'",
        "    hint: Did you mean 'b'?",
        "  - config: bad",
      ].join("\n"),
    );
  });
});
