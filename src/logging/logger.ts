import { hasSecrets, redactSecrets, redactSecretsIn } from "./redact-secrets.js";

/** Where Keel reports warnings (unknown plugin config keys, event payloads missing keys, swallowed handler
 * errors). Replace it with `setLogger` to route them into an application's logging. */
export interface Logger {
  debug(message: string, details?: Record<string, unknown>): void;
  info(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
}

const consoleLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: (message, details) => console.warn(`[keel] ${message}`, ...(details ? [details] : [])),
  error: (message, details) => console.error(`[keel] ${message}`, ...(details ? [details] : [])),
};

let current: Logger = consoleLogger;

/** Forwards to the installed logger with known secrets (API keys) redacted from the message and details. */
const redactingLogger: Logger = {
  debug: (message, details) => forward("debug", message, details),
  info: (message, details) => forward("info", message, details),
  warn: (message, details) => forward("warn", message, details),
  error: (message, details) => forward("error", message, details),
};

function forward(level: keyof Logger, message: string, details: Record<string, unknown> | undefined): void {
  const text = hasSecrets() ? redactSecrets(message) : message;
  // Called with as many arguments as it was given: a logger may tell "no details" from `undefined`.
  if (details === undefined) current[level](text);
  else current[level](text, redactSecretsIn(details));
}

/** The logger to report through: the installed one, behind the redaction of known secrets. */
export function getLogger(): Logger {
  return redactingLogger;
}

/** Install a logger; returns the previous one. */
export function setLogger(logger: Logger): Logger {
  const previous = current;
  // Installing what getLogger() returned would make it forward to itself.
  if (logger !== redactingLogger) current = logger;
  return previous;
}
