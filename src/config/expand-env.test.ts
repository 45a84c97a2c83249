// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text holding ${VAR} references
import { describe, expect, it } from "vitest";
import { ConfigLoadError } from "../errors/error-classes.js";
import { expandEnv, expandEnvDetailed, toSourceOffset } from "./expand-env.js";

describe("expandEnv", () => {
  const env = { MODEL: "gpt-4o", EMPTY: "", STEPS: "8" };

  it("replaces set variables", () => {
    expect(expandEnv('{"model": "${MODEL}", "max_steps": ${STEPS}}', env)).toBe(
      '{"model": "gpt-4o", "max_steps": 8}',
    );
  });

  it("uses the default when the variable is unset or empty", () => {
    expect(expandEnv("${UNSET:-fallback} ${EMPTY:-x} ${MODEL:-other} ${UNSET:-}", env)).toBe(
      "fallback x gpt-4o ",
    );
  });

  it("keeps a set but empty variable without a default", () => {
    expect(expandEnv("[${EMPTY}]", env)).toBe("[]");
  });

  it("leaves text that is not a complete reference as it is", () => {
    expect(expandEnv("${MODEL $5 ${ } ${1A} $MODEL", env)).toBe("${MODEL $5 ${ } ${1A} $MODEL");
  });

  it("fails on an unset variable without a default, naming it", () => {
    let caught: unknown;
    try {
      expandEnv('{"api_key_env": "${API_KEY}"}', env);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigLoadError);
    const error = caught as ConfigLoadError;
    expect(error.message).toBe(
      "Environment variable 'API_KEY' is not set (referenced in config as ${API_KEY})",
    );
    expect(error.hint).toBe("Set 'API_KEY' in your shell, or give a default: ${API_KEY:-value}");
    expect(error.code).toBe("config.load");
  });

  it("reads process.env by default", () => {
    process.env.KEEL_EXPAND_ENV_TEST = "yes";
    try {
      expect(expandEnv("${KEEL_EXPAND_ENV_TEST}")).toBe("yes");
    } finally {
      delete process.env.KEEL_EXPAND_ENV_TEST;
    }
  });
});

describe("toSourceOffset", () => {
  it("maps offsets in the expanded text back to the original", () => {
    const source = "ab${LONG}cd${X:-}ef";
    const expanded = expandEnvDetailed(source, { LONG: "0123456789" });
    expect(expanded.text).toBe("ab0123456789cdef");
    expect(toSourceOffset(expanded, 1)).toBe(1); // before any reference
    expect(toSourceOffset(expanded, 5)).toBe(2); // inside a value → the reference
    expect(toSourceOffset(expanded, 12)).toBe(source.indexOf("cd"));
    expect(toSourceOffset(expanded, 14)).toBe(source.indexOf("ef"));
  });
});
