import { KeelError } from "../../errors/keel-error.js";

/** SQLSTATEs worth retrying as-is: the server aborted the statement only because of a concurrent one. */
const CONFLICT_CODES = new Set(["40001", "40P01"]);

/** Node socket errors that mean the server cannot be reached or went away. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
]);

/** True for a serialization failure or deadlock, which the same statement may pass when retried. */
export function isConflict(error: unknown): boolean {
  return CONFLICT_CODES.has(errorCode(error) ?? "");
}

/** The connection string without its password, fit for a hint or a log line. */
export function redactConnectionString(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== "") url.password = "***";
    return url.toString();
  } catch {
    // Key-value form (`host=… password=…`).
    return connectionString.replace(/password\s*=\s*('[^']*'|\S+)/gi, "password=***");
  }
}

/**
 * A typed Keel error in place of a raw `pg` one. A lost or refused connection is `store.connection` and
 * retryable — durable runs resume on it — and its hint names where Keel tried to connect; a lock wait past
 * `lock_timeout_ms` is `store.lock_timeout`, also retryable; anything else is `store.query`.
 */
export function toStoreError(error: unknown, where: string, operation: string): KeelError {
  if (KeelError.isInstance(error)) return error;
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (isConnectionFailure(error, code, message)) {
    return new KeelError(`postgres store: ${operation} failed, no connection to the server: ${message}`, {
      code: "store.connection",
      retryable: true,
      cause: error,
      hint: `Check that PostgreSQL is running and reachable at ${where} (set connection_string, PGURL or DATABASE_URL).`,
      context: { operation, sqlstate: code },
    });
  }
  if (code === "55P03") {
    return new KeelError(`postgres store: ${operation} timed out waiting for a lock: ${message}`, {
      code: "store.lock_timeout",
      retryable: true,
      cause: error,
      hint: "Another process holds this session; raise lock_timeout_ms or run the session's runs one at a time.",
      context: { operation, sqlstate: code },
    });
  }
  return new KeelError(`postgres store: ${operation} failed: ${message}`, {
    code: "store.query",
    retryable: code !== undefined && CONFLICT_CODES.has(code),
    cause: error,
    hint: "See the cause's SQLSTATE; a schema changed by hand can be rebuilt by dropping it and letting Keel migrate.",
    context: { operation, sqlstate: code },
  });
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * What `pg` and `pg-pool` say, without a code, when a connection died or could not be made: a socket closed
 * under a query ("Connection terminated unexpectedly"), a client used after its connection failed ("…has
 * encountered a connection error and is not queryable") or after the pool discarded it ("Client was closed…"),
 * a connect that timed out, and the server's own words when it is going down or not up yet.
 */
const LOST_CONNECTION =
  /Connection terminated|not queryable|connection timeout|timeout exceeded when trying to connect|timeout expired|terminating connection|server closed the connection|the database system is (?:starting up|shutting down|in recovery|not yet accepting connections)/i;

function isConnectionFailure(error: unknown, code: string | undefined, message: string): boolean {
  if (code !== undefined) {
    // Class 08 is "connection exception"; 57P01–57P03 are shutdowns (admin, crash) and "cannot connect now";
    // 53300 is "too many connections", met while every client reconnects at once after a restart.
    if (code.startsWith("08") || /^57P0[1-3]$/.test(code) || code === "53300" || SOCKET_CODES.has(code))
      return true;
  }
  if (LOST_CONNECTION.test(message)) return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return (
    cause !== undefined && cause !== error && isConnectionFailure(cause, errorCode(cause), String(cause))
  );
}

/** How many times a statement the server aborted for a conflict is run again before the failure is reported. */
const CONFLICT_RETRIES = 3;

/** Run one statement, retrying serialization failures and deadlocks a few times; failures come out typed. */
export async function withConflictRetry<R>(
  run: () => Promise<R>,
  where: string,
  operation: string,
): Promise<R> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (!isConflict(error) || attempt >= CONFLICT_RETRIES) throw toStoreError(error, where, operation);
      // Jittered backoff, so two writers that collided do not collide again in lockstep.
      await new Promise((done) => setTimeout(done, 5 * 2 ** attempt * (1 + Math.random())));
    }
  }
}
