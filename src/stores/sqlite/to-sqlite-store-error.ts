import { KeelError } from "../../errors/keel-error.js";

/** SQLite primary result codes the store tells apart (`errcode & 0xff`). */
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_CORRUPT = 11;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;

/**
 * A typed Keel error in place of a raw binding one. A damaged or foreign file is `store.corrupt` (never retried:
 * corruption is refused, never skipped); a file that cannot be opened is `store.connection`; a write
 * lock still held by another process after the busy timeout is `store.lock_timeout`, retryable so durable runs
 * resume; anything else is `store.query`.
 */
export function toSqliteStoreError(error: unknown, dbPath: string, operation: string): KeelError {
  if (KeelError.isInstance(error)) return error;
  const code = sqliteResultCode(error);
  const message = error instanceof Error ? error.message : String(error);
  const context = { operation, dbPath, sqliteCode: code };
  if (code === SQLITE_CORRUPT || code === SQLITE_NOTADB) {
    return new KeelError(
      `sqlite store: ${dbPath} is damaged or not a SQLite database (${operation}): ${message}`,
      {
        code: "store.corrupt",
        cause: error,
        hint: "Restore the file from a backup, or point db_path at a new file; Keel will not read past corruption.",
        context,
      },
    );
  }
  if (code === SQLITE_CANTOPEN || /unable to open|ConnectionFailed/i.test(message)) {
    return new KeelError(`sqlite store: cannot open ${dbPath} (${operation}): ${message}`, {
      code: "store.connection",
      retryable: true,
      cause: error,
      hint: "Check that db_path's directory exists and is writable by this process.",
      context,
    });
  }
  if (code === SQLITE_BUSY || code === SQLITE_LOCKED) {
    return new KeelError(
      `sqlite store: ${operation} waited past the busy timeout for ${dbPath}: ${message}`,
      {
        code: "store.lock_timeout",
        retryable: true,
        cause: error,
        hint: "Another process holds the database's write lock; raise busy_timeout_ms or write less concurrently.",
        context,
      },
    );
  }
  return new KeelError(`sqlite store: ${operation} failed: ${message}`, {
    code: "store.query",
    cause: error,
    hint: "See the cause; a schema changed by hand can be rebuilt by moving the file away and letting Keel migrate.",
    context,
  });
}

/** True when SQLite gave up waiting for a lock another connection holds (SQLITE_BUSY or SQLITE_LOCKED). */
export function isSqliteBusy(error: unknown): boolean {
  const code = sqliteResultCode(error);
  return code === SQLITE_BUSY || code === SQLITE_LOCKED;
}

/** The primary SQLite result code of a node:sqlite (`errcode`) or libsql (`rawCode`, `code` name) error. */
function sqliteResultCode(error: unknown): number | undefined {
  const candidate = error as { errcode?: unknown; rawCode?: unknown; code?: unknown } | null;
  const raw = candidate?.errcode ?? candidate?.rawCode;
  if (typeof raw === "number") return raw & 0xff;
  switch (candidate?.code) {
    case "SQLITE_BUSY":
      return SQLITE_BUSY;
    case "SQLITE_LOCKED":
      return SQLITE_LOCKED;
    case "SQLITE_CORRUPT":
      return SQLITE_CORRUPT;
    case "SQLITE_NOTADB":
      return SQLITE_NOTADB;
    case "SQLITE_CANTOPEN":
      return SQLITE_CANTOPEN;
    default:
      return undefined;
  }
}
