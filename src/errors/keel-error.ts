/** Every error Keel raises or returns extends {@link KeelError}: a dotted string `code`, a `hint` that says what
 * to do, and `retryable`, the one fact durable resume and the `retry` executor act on. */

import { redactSecrets, redactSecretsIn } from "../logging/redact-secrets.js";

export interface KeelErrorContext {
  agentId?: string;
  sessionId?: string;
  runId?: string;
  toolId?: string;
  step?: number;
  [key: string]: unknown;
}

export interface KeelErrorOptions {
  code?: string;
  hint?: string;
  docsUrl?: string;
  retryable?: boolean;
  cause?: unknown;
  context?: KeelErrorContext;
}

/** What crosses a process boundary in place of an exception (`RunResult.errorDetails`). */
export interface ErrorDetails {
  code: string;
  message: string;
  hint?: string;
  retryable: boolean;
  context: KeelErrorContext;
  cause?: ErrorDetails;
}

const BRAND = Symbol.for("keel.error");

export class KeelError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly docsUrl: string | undefined;
  readonly retryable: boolean;
  context: KeelErrorContext;
  readonly [BRAND] = true;

  // Text that reaches an error (a provider's body that echoes the API key, say) is redacted of known secrets
  // here, once, so the message, stack, hint, context and cause chain never carry one wherever the error goes.
  constructor(message: string, options: KeelErrorOptions = {}) {
    super(
      redactSecrets(message),
      options.cause === undefined ? undefined : { cause: redactSecretsIn(options.cause) },
    );
    this.name = new.target.name;
    this.code = options.code ?? "error.keel";
    this.hint = options.hint === undefined ? undefined : redactSecrets(options.hint);
    this.docsUrl = options.docsUrl;
    this.retryable = options.retryable ?? false;
    this.context = redactSecretsIn({ ...options.context });
  }

  /** True for any Keel error, also one created by another copy of the package. */
  static isInstance(value: unknown): value is KeelError {
    return typeof value === "object" && value !== null && (value as { [BRAND]?: boolean })[BRAND] === true;
  }

  override toString(): string {
    let text = `${this.name}: ${this.message}`;
    if (this.hint) text += `\nhint: ${this.hint}`;
    if (this.docsUrl) text += `\ndocs: ${this.docsUrl}`;
    return text;
  }
}

/** True when an error (Keel's or a user's with `retryable: true`) may succeed if tried again. */
export function isRetryable(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { retryable?: unknown }).retryable === true;
}

/** Serialisable details of any thrown value; the cause chain is followed three levels deep. */
export function toErrorDetails(error: unknown, depth = 0): ErrorDetails {
  if (KeelError.isInstance(error)) {
    // Redacted again: a context is mutable, and an error made before its key was registered is not clean.
    const details: ErrorDetails = {
      code: error.code,
      message: redactSecrets(firstLine(error.message)),
      retryable: error.retryable,
      context: redactSecretsIn({ ...error.context }),
    };
    if (error.hint !== undefined) details.hint = redactSecrets(error.hint);
    if (error.cause !== undefined && depth < 3) details.cause = toErrorDetails(error.cause, depth + 1);
    return details;
  }
  if (error instanceof Error) {
    const details: ErrorDetails = {
      code: "error.unknown",
      message: redactSecrets(firstLine(error.message)) || error.name,
      retryable: isRetryable(error),
      context: {},
    };
    if (error.cause !== undefined && depth < 3) details.cause = toErrorDetails(error.cause, depth + 1);
    return details;
  }
  return { code: "error.unknown", message: redactSecrets(String(error)), retryable: false, context: {} };
}

function firstLine(text: string): string {
  const newline = text.indexOf("\n");
  return newline === -1 ? text : text.slice(0, newline);
}
