import { describe, expect, it } from "vitest";
import {
  ConfigError,
  LLMConnectionError,
  LLMRateLimitError,
  LLMResponseError,
} from "../../../errors/error-classes.js";
import type { KeelError } from "../../../errors/keel-error.js";
import { parseScript, type ScriptStep, scriptedError } from "./scripted-turn.js";

function parseError(script: unknown[]): KeelError {
  try {
    parseScript(script);
  } catch (error) {
    return error as KeelError;
  }
  throw new Error("parseScript did not throw");
}

const HINT =
  "A scripted turn has text, deltas, reasoning, tool_calls [{name, arguments}], usage, error or delay_ms";

describe("parseScript", () => {
  it("keeps text, deltas and reasoning", () => {
    expect(parseScript([{ text: "hi" }, { deltas: ["a", "b"] }, { reasoning: "think", text: "" }])).toEqual([
      { text: "hi" },
      { deltas: ["a", "b"] },
      { reasoning: "think", text: "" },
    ]);
  });

  it("normalises snake_case config turns to camelCase", () => {
    expect(
      parseScript([
        {
          tool_calls: [
            { id: "c1", name: "add", arguments: { a: 1 } },
            { name: "bad", raw_arguments: "{oops" },
          ],
          usage: {
            input_tokens: 10,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_creation_tokens: 4,
            reasoning_tokens: 5,
          },
          error: { type: "rate_limit", message: "slow", retry_after_ms: 1500 },
          delay_ms: 20,
        },
      ]),
    ).toEqual([
      {
        toolCalls: [
          { id: "c1", name: "add", arguments: { a: 1 } },
          { name: "bad", rawArguments: "{oops" },
        ],
        usage: {
          inputTokens: 10,
          outputTokens: 2,
          cacheReadTokens: 3,
          cacheCreationTokens: 4,
          reasoningTokens: 5,
        },
        error: { type: "rate_limit", message: "slow", retryAfterMs: 1500 },
        delayMs: 20,
      },
    ]);
  });

  it("accepts camelCase turns and prefers camelCase when both are given", () => {
    expect(
      parseScript([
        {
          toolCalls: [{ name: "a", rawArguments: "x" }],
          tool_calls: [{ name: "ignored" }],
          usage: { inputTokens: 1, input_tokens: 99, outputTokens: 2 },
          error: { type: "connection", retryAfterMs: 5, retry_after_ms: 9 },
          delayMs: 7,
          delay_ms: 8,
        },
      ]),
    ).toEqual([
      {
        toolCalls: [{ name: "a", rawArguments: "x" }],
        usage: { inputTokens: 1, outputTokens: 2 },
        error: { type: "connection", retryAfterMs: 5 },
        delayMs: 7,
      },
    ]);
  });

  it("drops usage fields that were not given", () => {
    expect(parseScript([{ usage: { output_tokens: 4 } }])).toEqual([{ usage: { outputTokens: 4 } }]);
    expect(parseScript([{}])).toEqual([{}]);
  });

  it("passes function steps through untouched", () => {
    const step: ScriptStep = () => ({ text: "computed" });
    const [parsed] = parseScript([step]);
    expect(parsed).toBe(step);
  });

  it("names the entry and the path of a bad value", () => {
    const error = parseError([{ text: "ok" }, { text: 5 }]);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.code).toBe("config.error");
    expect(error.message).toBe("llm.script[1].text: Invalid input: expected string, received number");
    expect(error.hint).toBe(HINT);
  });

  it("names nested paths", () => {
    expect(parseError([{ usage: { input_tokens: -1 } }]).message).toBe(
      "llm.script[0].usage.input_tokens: Too small: expected number to be >=0",
    );
    expect(parseError([{ tool_calls: [{ arguments: {} }] }]).message).toBe(
      "llm.script[0].tool_calls[0].name: Invalid input: expected string, received undefined",
    );
    expect(parseError([{ error: { type: "server" } }]).message).toMatch(/^llm\.script\[0\]\.error\.type: /);
  });

  // Minor inconsistency (src/models/providers/mock/scripted-turn.ts, parseScript): array indices inside a turn
  // are joined with dots (`tool_calls.0.name`) while config paths elsewhere use brackets
  // (formatConfigPath in src/config/config-issues.ts: `agents[0].tools[1].id`).
  it("writes array indices inside a turn in brackets like other config paths", () => {
    expect(parseError([{ tool_calls: [{ arguments: {} }] }]).message).toBe(
      "llm.script[0].tool_calls[0].name: Invalid input: expected string, received undefined",
    );
  });

  it("names the entry alone for an unknown key or a turn that is not an object", () => {
    expect(parseError([{ txt: "x" }]).message).toBe('llm.script[0]: Unrecognized key: "txt"');
    expect(parseError([{}, {}, "hello"]).message).toBe(
      "llm.script[2]: Invalid input: expected object, received string",
    );
    expect(parseError([{ tool_calls: [{ name: "a", args: {} }] }]).message).toBe(
      'llm.script[0].tool_calls[0]: Unrecognized key: "args"',
    );
  });

  it("rejects negative or fractional delays", () => {
    expect(parseError([{ delay_ms: -1 }]).message).toMatch(/^llm\.script\[0\]\.delay_ms: /);
    expect(parseError([{ delayMs: 1.5 }]).message).toMatch(/^llm\.script\[0\]\.delayMs: /);
  });
});

describe("scriptedError", () => {
  it("makes a rate-limit error, with retryAfterMs when given", () => {
    const error = scriptedError({ type: "rate_limit", message: "slow down", retryAfterMs: 2000 });
    expect(error).toBeInstanceOf(LLMRateLimitError);
    expect(error.message).toBe("slow down");
    expect(error.retryable).toBe(true);
    expect((error as LLMRateLimitError).retryAfterMs).toBe(2000);
    expect(error.context).toEqual({ retryAfterMs: 2000 });
    const bare = scriptedError({ type: "rate_limit" }) as LLMRateLimitError;
    expect(bare.retryAfterMs).toBeUndefined();
    expect(bare.message).toBe("scripted rate_limit error");
  });

  it("makes connection and response errors, and a response error for unknown", () => {
    const connection = scriptedError({ type: "connection" });
    expect(connection).toBeInstanceOf(LLMConnectionError);
    expect(connection.message).toBe("scripted connection error");
    expect(connection.code).toBe("llm.connection");
    const response = scriptedError({ type: "response", message: "bad json" });
    expect(response).toBeInstanceOf(LLMResponseError);
    expect(response.message).toBe("bad json");
    const unknown = scriptedError({ type: "unknown" });
    expect(unknown).toBeInstanceOf(LLMResponseError);
    expect(unknown.message).toBe("scripted unknown error");
  });
});
