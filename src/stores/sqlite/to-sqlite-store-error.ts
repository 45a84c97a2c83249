import { KeelError } from "../../errors/keel-error.js";

/** What a closed store's calls are refused with. */
export function sqliteStoreClosedError(): KeelError {
  return new KeelError("sqlite store: the session manager is closed", {
    code: "store.closed",
    hint: "Create a new SqliteSessionManager; close() closed its database file.",
  });
}

/** SQLite primary result codes the store tells apart (`errcode & 0xff`). */
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;

/**
 * A typed Keel error in place of a raw binding one. A damaged or foreign file is `store.corrupt` (never retried:
 * corruption is refused, never skipped); a file that cannot be opened is `store.connection`; a write lock still
 * held by another connection after the busy timeout is `store.busy`, a full disk `store.disk_full` and a failed
 * read or write of the device `store.io` — all three retryable, and waited out by durable runs (SQLite rolls
 * the statement back, so nothing of it is left half-written); anything else is `store.query`.
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
        code: "store.busy",
        retryable: true,
        cause: error,
        hint: "Another connection holds the database's write lock; raise busy_timeout_ms or write less concurrently.",
        context,
      },
    );
  }
  if (code === SQLITE_FULL) {
    return new KeelError(
      `sqlite store: ${operation} failed, the disk holding ${dbPath} is full: ${message}`,
      {
        code: "store.disk_full",
        retryable: true,
        cause: error,
        hint: "Free space on the disk holding db_path (or move it to a bigger one); nothing of the failed write was kept.",
        context,
      },
    );
  }
  if (code === SQLITE_IOERR) {
    return new KeelError(
      `sqlite store: ${operation} failed, the device holding ${dbPath} failed: ${message}`,
      {
        code: "store.io",
        retryable: true,
        cause: error,
        hint: "Check the disk or network file system holding db_path; SQLite rolled the failed write back.",
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
    case "SQLITE_FULL":
      return SQLITE_FULL;
    case "SQLITE_IOERR":
      return SQLITE_IOERR;
    default:
      return undefined;
  }
}
