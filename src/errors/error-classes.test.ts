import { describe, expect, it } from "vitest";
import type { RunResult } from "../contracts/run-types.js";
import {
  BudgetExhaustedError,
  ConfigError,
  ConfigLoadError,
  ConfigValidationError,
  DecisionError,
  IllegalTransitionError,
  LLMConnectionError,
  LLMRateLimitError,
  LLMResponseError,
  ModelRetryError,
  OutputValidationError,
  PatternError,
  PermanentToolError,
  PermissionDeniedError,
  PluginConfigError,
  PluginLoadError,
  RunNotCompletedError,
  SandboxError,
  SessionQueueFullError,
  ToolAuthError,
  ToolCancelledError,
  ToolError,
  ToolRateLimitError,
  ToolTimeoutError,
  ToolUnavailableError,
  ToolValidationError,
  UnknownRunError,
} from "./error-classes.js";
import { ERROR_CODES } from "./error-codes.js";
import { isRetryable, KeelError, toErrorDetails } from "./keel-error.js";

const families: [string, () => KeelError, string, boolean][] = [
  ["ConfigError", () => new ConfigError("m"), "config.error", false],
  ["ConfigValidationError", () => new ConfigValidationError("m"), "config.validation", false],
  ["ConfigLoadError", () => new ConfigLoadError("m"), "config.load", false],
  ["PluginLoadError", () => new PluginLoadError("m"), "plugin.load", false],
  ["PluginConfigError", () => new PluginConfigError("m"), "plugin.config", false],
  ["LLMRateLimitError", () => new LLMRateLimitError("m"), "llm.rate_limit", true],
  ["LLMConnectionError", () => new LLMConnectionError("m"), "llm.connection", true],
  ["LLMResponseError", () => new LLMResponseError("m"), "llm.response", false],
  ["ToolError", () => new ToolError("m"), "tool.error", false],
  ["ToolValidationError", () => new ToolValidationError("m"), "tool.validation", false],
  ["ToolAuthError", () => new ToolAuthError("m"), "tool.auth", false],
  ["ToolRateLimitError", () => new ToolRateLimitError("m"), "tool.rate_limit", true],
  ["ToolUnavailableError", () => new ToolUnavailableError("m"), "tool.unavailable", true],
  ["ToolTimeoutError", () => new ToolTimeoutError("m", { timeoutMs: 5 }), "tool.timeout", true],
  ["ToolCancelledError", () => new ToolCancelledError("m"), "tool.cancelled", false],
  ["PermanentToolError", () => new PermanentToolError("m"), "tool.permanent", false],
  ["PermissionDeniedError", () => new PermissionDeniedError("m"), "tool.permission_denied", false],
  [
    "BudgetExhaustedError",
    () => new BudgetExhaustedError("m", { kind: "cost" }),
    "run.budget_exhausted",
    false,
  ],
  [
    "OutputValidationError",
    () => new OutputValidationError("m", { outputType: null, attempts: 1 }),
    "execution.output_validation",
    false,
  ],
  ["ModelRetryError", () => new ModelRetryError("m"), "execution.model_retry", false],
  ["PatternError", () => new PatternError("m"), "execution.pattern", false],
  [
    "RunNotCompletedError",
    () => new RunNotCompletedError("m", { result: null as never }),
    "run.not_completed",
    false,
  ],
  ["DecisionError", () => new DecisionError("m"), "run.decision", false],
  ["UnknownRunError", () => new UnknownRunError("m"), "run.unknown", false],
  ["SessionQueueFullError", () => new SessionQueueFullError("m"), "session.queue_full", true],
  ["IllegalTransitionError", () => new IllegalTransitionError("m"), "state.illegal_transition", false],
];

describe("error families", () => {
  const rows = families.map(([name, make, code, retryable]) => ({ name, make, code, retryable }));
  it.each(rows)("$name has code $code and retryable $retryable", ({ name, make, code, retryable }) => {
    const error = make();
    expect(error).toBeInstanceOf(KeelError);
    expect(KeelError.isInstance(error)).toBe(true);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect(isRetryable(error)).toBe(retryable);
    expect(error.message).toBe("m");
  });

  it("uses only codes from ERROR_CODES", () => {
    const known = new Set<string>(Object.values(ERROR_CODES));
    for (const [, make] of families) expect(known.has(make().code)).toBe(true);
  });

  it("makes exactly the rate-limit, connection, unavailable and timeout errors retryable (plus a full queue)", () => {
    const retryable = families.filter(([, make]) => make().retryable).map(([name]) => name);
    expect(retryable).toEqual([
      "LLMRateLimitError",
      "LLMConnectionError",
      "ToolRateLimitError",
      "ToolUnavailableError",
      "ToolTimeoutError",
      "SessionQueueFullError",
    ]);
  });

  it("keeps the config subclasses inside the ConfigError family", () => {
    expect(new ConfigValidationError("m")).toBeInstanceOf(ConfigError);
    expect(new ConfigLoadError("m")).toBeInstanceOf(ConfigError);
  });

  it("lets the caller replace the code but not the retryable default", () => {
    const error = new PluginLoadError("m", { code: "plugin.custom", hint: "h", context: { agentId: "a" } });
    expect(error.code).toBe("plugin.custom");
    expect(error.retryable).toBe(false);
    expect(error.hint).toBe("h");
    expect(error.context).toEqual({ agentId: "a" });
    expect(new ConfigValidationError("m", { code: "config.other" }).code).toBe("config.other");
    expect(new ConfigLoadError("m", { code: "config.other" }).code).toBe("config.other");
  });

  it("lets a ToolError opt into retryable", () => {
    expect(new ToolError("m", { retryable: true }).retryable).toBe(true);
    expect(new ToolError("m", { retryable: false }).retryable).toBe(false);
  });
});

describe("error fields", () => {
  it("puts LLMRateLimitError.retryAfterMs in its context", () => {
    const error = new LLMRateLimitError("slow down", { retryAfterMs: 1500, context: { runId: "r" } });
    expect(error.retryAfterMs).toBe(1500);
    expect(error.context).toEqual({ runId: "r", retryAfterMs: 1500 });
    expect(toErrorDetails(error)).toEqual({
      code: "llm.rate_limit",
      message: "slow down",
      retryable: true,
      context: { runId: "r", retryAfterMs: 1500 },
    });
    const without = new LLMRateLimitError("slow down");
    expect(without.retryAfterMs).toBeUndefined();
    expect(without.context).toEqual({});
  });

  // BUG (src/errors/error-classes.ts line ~58 with src/errors/keel-error.ts line ~49): KeelError keeps the
  // caller's `context` object by reference and LLMRateLimitError then writes `retryAfterMs` into it, so a context
  // object shared between errors (or reused by a provider) is modified.
  it("does not modify the caller's context object", () => {
    const shared = { runId: "r" };
    const error = new LLMRateLimitError("slow down", { retryAfterMs: 1500, context: shared });
    expect(error.context).toEqual({ runId: "r", retryAfterMs: 1500 });
    expect(shared).toEqual({ runId: "r" });
  });

  it("keeps the extra fields of the other families", () => {
    expect(new ToolRateLimitError("m", { retryAfterMs: 20 }).retryAfterMs).toBe(20);
    expect(new ToolTimeoutError("m", { timeoutMs: 250 }).timeoutMs).toBe(250);
    expect(new LLMResponseError("m", { status: 400 }).status).toBe(400);
    expect(new PermissionDeniedError("m", { rule: "deny:shell" }).rule).toBe("deny:shell");
    const budget = new BudgetExhaustedError("m", { kind: "cost", current: 2, limit: 1 });
    expect([budget.kind, budget.current, budget.limit]).toEqual(["cost", 2, 1]);
    const info = { attempt: 2, message: "bad", expectedSchema: { type: "object" } };
    const output = new OutputValidationError("m", {
      outputType: "T",
      attempts: 3,
      lastValidationError: info,
    });
    expect([output.outputType, output.attempts, output.lastValidationError]).toEqual(["T", 3, info]);
    expect(new ModelRetryError("m", { validationError: "v" }).validationError).toBe("v");
    const result = { stopReason: "failed" } as RunResult;
    expect(new RunNotCompletedError("m", { result }).result).toBe(result);
    const issues = [{ path: "agents[0].id", message: "required" }];
    expect(new ConfigValidationError("m", { issues }).issues).toEqual(issues);
    expect(new ConfigValidationError("m").issues).toEqual([]);
  });

  it("gives every sandbox refusal a sandbox.* code and the policy's rule name", () => {
    const rules = Object.entries(ERROR_CODES)
      .filter(([key]) => key.startsWith("SANDBOX_"))
      .map(([, code]) => {
        const error = new SandboxError("m", { code });
        expect(error).toBeInstanceOf(PermissionDeniedError);
        expect(error.name).toBe("SandboxError");
        expect(error.retryable).toBe(false);
        return [error.code, error.rule];
      });
    expect(rules).toEqual([
      ["sandbox.path_outside", "path_outside_sandbox"],
      ["sandbox.read_only", "path_read_only"],
      ["sandbox.invalid_path", "invalid_path"],
      ["sandbox.special_file", "special_file"],
      ["sandbox.hard_link", "hard_link"],
      ["sandbox.path_changed", "path_changed"],
      ["sandbox.too_large", "size_limit"],
      ["sandbox.root_missing", "root_missing"],
    ]);
    expect(new SandboxError("m", { code: "sandbox.other" }).rule).toBe("invalid_path");
  });
});
