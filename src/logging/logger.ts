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

export function getLogger(): Logger {
  return current;
}

/** Install a logger; returns the previous one. */
export function setLogger(logger: Logger): Logger {
  const previous = current;
  current = logger;
  return previous;
}
