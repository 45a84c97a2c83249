import { describe, expect, it } from "vitest";
import { ConfigError } from "../../errors/error-classes.js";
import { loadApiKey } from "./load-api-key.js";
import { mergeHeaders } from "./merge-headers.js";

describe("loadApiKey", () => {
  it("reads the key from its variable, trimmed", () => {
    expect(loadApiKey({ variable: "MY_KEY", provider: "anthropic", env: { MY_KEY: " sk-1 \n" } })).toBe(
      "sk-1",
    );
  });

  it("fails with a ConfigError naming the variable when it is missing or empty", () => {
    for (const env of [{}, { ANTHROPIC_API_KEY: "  " }]) {
      let error: unknown;
      try {
        loadApiKey({ variable: "ANTHROPIC_API_KEY", provider: "anthropic", env });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toBe(
        'llm.provider "anthropic" needs an API key, and the environment variable ANTHROPIC_API_KEY is not set',
      );
      expect((error as ConfigError).hint).toBe(
        "Set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=...), or name another variable in llm.api_key_env",
      );
    }
  });
});

describe("mergeHeaders", () => {
  it("lets later layers replace earlier ones whatever the case of the name", () => {
    expect(
      mergeHeaders({ "anthropic-version": "2023-06-01", "x-api-key": "k" }, undefined, {
        "Anthropic-Version": "2024-01-01",
        "X-Trace": "1",
      }),
    ).toEqual({ "anthropic-version": "2024-01-01", "x-api-key": "k", "x-trace": "1" });
  });
});
