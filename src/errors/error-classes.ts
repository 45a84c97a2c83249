import type { RunResult } from "../contracts/run-types.js";
import { ERROR_CODES } from "./error-codes.js";
import { KeelError, type KeelErrorOptions } from "./keel-error.js";

type Options = Omit<KeelErrorOptions, "code" | "retryable"> & { code?: string };

function withDefaults(options: Options | undefined, code: string, retryable: boolean): KeelErrorOptions {
  return { ...options, code: options?.code ?? code, retryable };
}

// ── configuration and plugins ─────────────────────────────────────────────────────────────────────────────

export class ConfigError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.CONFIG, false));
  }
}

export interface ConfigIssue {
  path: string;
  message: string;
  hint?: string;
}

/** The config does not match the schema. `issues` lists every problem, each with its path. */
export class ConfigValidationError extends ConfigError {
  readonly issues: ConfigIssue[];
  constructor(message: string, options: Options & { issues?: ConfigIssue[] } = {}) {
    super(message, { ...options, code: options.code ?? ERROR_CODES.CONFIG_VALIDATION });
    this.issues = options.issues ?? [];
  }
}

export class ConfigLoadError extends ConfigError {
  constructor(message: string, options?: Options) {
    super(message, { ...options, code: options?.code ?? ERROR_CODES.CONFIG_LOAD });
  }
}

export class PluginLoadError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.PLUGIN_LOAD, false));
  }
}

export class PluginConfigError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.PLUGIN_CONFIG, false));
  }
}

// ── models ────────────────────────────────────────────────────────────────────────────────────────────────

export class LLMRateLimitError extends KeelError {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: Options & { retryAfterMs?: number } = {}) {
    super(message, withDefaults(options, ERROR_CODES.LLM_RATE_LIMIT, true));
    this.retryAfterMs = options.retryAfterMs;
    if (options.retryAfterMs !== undefined) this.context.retryAfterMs = options.retryAfterMs;
  }
}

export class LLMConnectionError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.LLM_CONNECTION, true));
  }
}

export class LLMResponseError extends KeelError {
  readonly status: number | undefined;
  constructor(message: string, options: Options & { status?: number } = {}) {
    super(message, withDefaults(options, ERROR_CODES.LLM_RESPONSE, false));
    this.status = options.status;
  }
}

// ── tools ─────────────────────────────────────────────────────────────────────────────────────────────────

/** A tool failed. Plain errors thrown by tools are wrapped in this. */
export class ToolError extends KeelError {
  constructor(message: string, options?: Options & { retryable?: boolean }) {
    super(message, withDefaults(options, ERROR_CODES.TOOL_ERROR, options?.retryable ?? false));
  }
}

export class ToolValidationError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.TOOL_VALIDATION, false));
  }
}

export class ToolAuthError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.TOOL_AUTH, false));
  }
}

export class ToolRateLimitError extends KeelError {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: Options & { retryAfterMs?: number } = {}) {
    super(message, withDefaults(options, ERROR_CODES.TOOL_RATE_LIMIT, true));
    this.retryAfterMs = options.retryAfterMs;
  }
}

export class ToolUnavailableError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.TOOL_UNAVAILABLE, true));
  }
}

export class ToolTimeoutError extends KeelError {
  readonly timeoutMs: number;
  constructor(message: string, options: Options & { timeoutMs: number }) {
    super(message, withDefaults(options, ERROR_CODES.TOOL_TIMEOUT, true));
    this.timeoutMs = options.timeoutMs;
  }
}

export class ToolCancelledError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.TOOL_CANCELLED, false));
  }
}

/** A tool error that no retry or resume can fix; a preflight failure ends the run before the loop. */
export class PermanentToolError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.TOOL_PERMANENT, false));
  }
}

export class PermissionDeniedError extends KeelError {
  readonly rule: string | undefined;
  constructor(message: string, options: Options & { rule?: string } = {}) {
    super(message, withDefaults(options, ERROR_CODES.PERMISSION_DENIED, false));
    this.rule = options.rule;
  }
}

/** Why the sandbox refused a path; `rule` is the name the permission policy reports. */
export type SandboxRule =
  | "path_outside_sandbox"
  | "path_read_only"
  | "invalid_path"
  | "special_file"
  | "hard_link"
  | "path_changed"
  | "size_limit"
  | "root_missing";

const SANDBOX_RULES: Record<string, SandboxRule> = {
  [ERROR_CODES.SANDBOX_PATH_OUTSIDE]: "path_outside_sandbox",
  [ERROR_CODES.SANDBOX_READ_ONLY]: "path_read_only",
  [ERROR_CODES.SANDBOX_INVALID_PATH]: "invalid_path",
  [ERROR_CODES.SANDBOX_SPECIAL_FILE]: "special_file",
  [ERROR_CODES.SANDBOX_HARD_LINK]: "hard_link",
  [ERROR_CODES.SANDBOX_PATH_CHANGED]: "path_changed",
  [ERROR_CODES.SANDBOX_TOO_LARGE]: "size_limit",
  [ERROR_CODES.SANDBOX_ROOT_MISSING]: "root_missing",
};

/**
 * The filesystem sandbox refused a path or a size: `code` is one of the `sandbox.*` codes. Its message
 * names only the path the model gave and what is allowed, never a host path the model did not write.
 */
export class SandboxError extends PermissionDeniedError {
  declare readonly rule: SandboxRule;
  constructor(message: string, options: Options & { code: string }) {
    super(message, { ...options, rule: SANDBOX_RULES[options.code] ?? "invalid_path" });
  }
}

// ── runs ──────────────────────────────────────────────────────────────────────────────────────────────────

export class BudgetExhaustedError extends KeelError {
  readonly kind: string;
  readonly current: number | undefined;
  readonly limit: number | undefined;
  constructor(message: string, options: Options & { kind: string; current?: number; limit?: number }) {
    super(message, withDefaults(options, ERROR_CODES.BUDGET_EXHAUSTED, false));
    this.kind = options.kind;
    this.current = options.current;
    this.limit = options.limit;
  }
}

export interface ValidationErrorInfo {
  attempt: number;
  message: string;
  expectedSchema: unknown;
}

export class OutputValidationError extends KeelError {
  readonly outputType: unknown;
  readonly attempts: number;
  readonly lastValidationError: ValidationErrorInfo | undefined;
  constructor(
    message: string,
    options: Options & { outputType: unknown; attempts: number; lastValidationError?: ValidationErrorInfo },
  ) {
    super(message, withDefaults(options, ERROR_CODES.OUTPUT_VALIDATION, false));
    this.outputType = options.outputType;
    this.attempts = options.attempts;
    this.lastValidationError = options.lastValidationError;
  }
}

/** Thrown by a pattern or a tool to ask the model to try again; counts against `maxValidationRetries`. */
export class ModelRetryError extends KeelError {
  readonly validationError: unknown;
  constructor(message: string, options: Options & { validationError?: unknown } = {}) {
    super(message, withDefaults(options, ERROR_CODES.MODEL_RETRY, false));
    this.validationError = options.validationError;
  }
}

export class PatternError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.PATTERN, false));
  }
}

/**
 * `runtime.run()` rejects with this when the run ended with any stop reason other than `completed`; `result` is
 * the run's RunResult, `T` its output type (a `catch` sees `RunNotCompletedError<unknown>`).
 */
export class RunNotCompletedError<T = unknown> extends KeelError {
  readonly result: RunResult<T>;
  constructor(message: string, options: Options & { result: RunResult<T> }) {
    super(message, withDefaults(options, ERROR_CODES.RUN_NOT_COMPLETED, false));
    this.result = options.result;
  }
}

export class DecisionError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.DECISION, false));
  }
}

/** A stream consumer fell behind a live run further than memory keeps, and the store cannot give the gap. */
export class RunEventsLostError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.RUN_EVENTS_LOST, false));
  }
}

export class SessionQueueFullError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.SESSION_QUEUE_FULL, true));
  }
}

/** The store has no run with this id. */
export class UnknownRunError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.RUN_UNKNOWN, false));
  }
}

/** Another process (or this one) is continuing the run; retrying once it has finished or suspended may work. */
export class RunBusyError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.RUN_BUSY, true));
  }
}

/**
 * The session store did not answer for longer than a durable run waits (`durable.store_outage_ms`). The run
 * stopped where its last checkpoint is and can be resumed once the store is back; `cause` is the store's last
 * error.
 */
export class StoreUnavailableError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.STORE_UNAVAILABLE, true));
  }
}

export class IllegalTransitionError extends KeelError {
  constructor(message: string, options?: Options) {
    super(message, withDefaults(options, ERROR_CODES.STATE_TRANSITION, false));
  }
}
