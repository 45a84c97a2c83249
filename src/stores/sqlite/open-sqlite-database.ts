import { PluginLoadError } from "../../errors/error-classes.js";
import { isSqliteBusy } from "./to-sqlite-store-error.js";

/** A value SQLite binds or returns; both bindings accept these for `?` parameters. */
export type SqliteValue = string | number | bigint | null | Uint8Array;

/** A prepared statement: the part both bindings share (better-sqlite3's shape). */
export interface SqliteStatement {
  /** Run it; `changes` counts the rows it inserted, updated or deleted. */
  run(...params: SqliteValue[]): { changes: number | bigint };
  /** The first row, or undefined when there is none. */
  get(...params: SqliteValue[]): Record<string, unknown> | undefined;
  all(...params: SqliteValue[]): Record<string, unknown>[];
}

/** Which binding a {@link SqliteDatabase} runs on. */
export type SqliteBindingName = "node:sqlite" | "libsql";

/** The tiny synchronous surface the SQLite store needs from a binding. */
export interface SqliteDatabase {
  readonly binding: SqliteBindingName;
  prepare(sql: string): SqliteStatement;
  /** Run one or more statements without parameters. */
  exec(sql: string): void;
  /**
   * Run `fn` inside `BEGIN IMMEDIATE … COMMIT`, rolling back when it throws. `fn` is synchronous on purpose: with
   * a synchronous binding no other JavaScript can issue statements on this connection mid-transaction, so
   * transactions never interleave. `BEGIN IMMEDIATE` takes the write lock up front (waiting up to the busy
   * timeout), so a read-modify-write never fails half-way with SQLITE_BUSY on lock upgrade.
   */
  transaction<T>(fn: () => T): T;
  /**
   * Run one write statement on its own, outside any transaction: SQLite makes it a transaction of its own. Its
   * first step takes the write lock, waiting up to the busy timeout as `BEGIN IMMEDIATE` does (nothing has been
   * read yet, so there is no read lock to upgrade), and its end commits; a failure rolls all of it back. The
   * statement is left reset when it fails, so it holds nothing up.
   */
  runAlone(statement: SqliteStatement, params: readonly SqliteValue[]): void;
  close(): void;
}

/** Loads a module by specifier; injectable so tests can simulate a missing package. */
export type SqliteModuleImporter = (specifier: string) => Promise<unknown>;

/** Options of {@link openSqliteDatabase}. */
export interface OpenSqliteDatabaseOptions {
  /** `auto` (default) prefers the built-in `node:sqlite` and falls back to the `libsql` package. */
  binding?: "auto" | SqliteBindingName;
  importer?: SqliteModuleImporter;
}

interface RawDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  close(): unknown;
}

type RawConstructor = new (path: string) => RawDatabase;

// A variable specifier keeps TypeScript and bundlers from resolving the optional package at build time.
const defaultImporter: SqliteModuleImporter = (specifier) => import(specifier);

/**
 * Open the database at `path` on the first binding that loads: the built-in `node:sqlite` (Node ≥ 22.5 without a
 * flag from 22.13) needs nothing installed; otherwise the optional `libsql` package, whose prebuilt binaries
 * come from the npm registry, so no user ever compiles anything. Neither loading is a {@link PluginLoadError}
 * whose hint says what to install.
 */
export async function openSqliteDatabase(
  path: string,
  options: OpenSqliteDatabaseOptions = {},
): Promise<SqliteDatabase> {
  const importer = options.importer ?? defaultImporter;
  const binding = options.binding ?? "auto";
  const { Database, name } = await loadBinding(binding, importer);
  const raw = new Database(path);
  return wrap(raw, name);
}

async function loadBinding(
  binding: "auto" | SqliteBindingName,
  importer: SqliteModuleImporter,
): Promise<{ Database: RawConstructor; name: SqliteBindingName }> {
  if (binding !== "libsql") {
    try {
      const module = (await importer("node:sqlite")) as { DatabaseSync?: RawConstructor };
      if (typeof module.DatabaseSync === "function")
        return { Database: module.DatabaseSync, name: "node:sqlite" };
    } catch (error) {
      // Older Node has no such builtin (ERR_UNKNOWN_BUILTIN_MODULE); that is what the libsql fallback is for.
      if (binding === "node:sqlite") {
        throw new PluginLoadError(
          'session store "sqlite" was told to use node:sqlite, which this Node lacks',
          {
            hint: "node:sqlite needs Node ≥ 22.13 (or 22.5 with --experimental-sqlite); or use the libsql binding.",
            cause: error,
          },
        );
      }
    }
  }
  let module: { default?: RawConstructor };
  try {
    module = (await importer("libsql")) as { default?: RawConstructor };
  } catch (error) {
    throw new PluginLoadError(
      `session store "sqlite" needs the built-in node:sqlite (Node ≥ 22.13) or the npm package libsql, and neither could be loaded on Node ${process.versions.node}`,
      { hint: "npm install libsql", cause: error },
    );
  }
  // libsql is CommonJS: `module.exports = Database` arrives as `default`.
  const Database = (module.default ?? module) as unknown as RawConstructor;
  if (typeof Database !== "function") {
    throw new PluginLoadError('session store "sqlite": the libsql package does not export a Database class', {
      hint: "npm install libsql@^0.5",
    });
  }
  return { Database, name: "libsql" };
}

/**
 * libsql leaves a statement that failed where it stopped, and resets it only when it is next run. One that could
 * not get the write lock in time stays counted as a running write: every later COMMIT on the connection then
 * fails, and a later write outside a transaction is not committed until that statement ends. So it is run once
 * more at once with writes forbidden: the run resets it, and its first step, before it reads or locks anything,
 * fails. (node:sqlite resets a statement after every run, so there this only costs the extra calls.)
 */
function settleFailedStatement(
  raw: RawDatabase,
  statement: SqliteStatement,
  params: readonly SqliteValue[],
): void {
  try {
    raw.exec("PRAGMA query_only = ON");
    try {
      statement.run(...params);
    } catch {
      // Refused, as it must be: SQLITE_READONLY.
    } finally {
      raw.exec("PRAGMA query_only = OFF");
    }
  } catch {
    // The statement's own error is the one to report.
  }
}

/** libsql's `run` given its params as one array. */
interface ArrayRun {
  run(params: readonly SqliteValue[]): unknown;
}

function wrap(raw: RawDatabase, binding: SqliteBindingName): SqliteDatabase {
  return {
    binding,
    prepare: (sql) => raw.prepare(sql),
    exec: (sql) => {
      raw.exec(sql);
    },
    transaction<T>(fn: () => T): T {
      raw.exec("BEGIN IMMEDIATE");
      let result: T;
      try {
        result = fn();
        raw.exec("COMMIT");
      } catch (error) {
        try {
          raw.exec("ROLLBACK");
        } catch {
          // SQLite may already have rolled back (e.g. on SQLITE_FULL); the original error is what matters.
        }
        throw error;
      }
      return result;
    },
    runAlone(statement, params) {
      try {
        // libsql takes an array as the positional params and then spares copying them (`flat()`); node:sqlite
        // would read it as named params.
        if (binding === "libsql") (statement as unknown as ArrayRun).run(params);
        else statement.run(...params);
      } catch (error) {
        settleFailedStatement(raw, statement, params);
        throw error;
      }
    },
    close: () => {
      raw.close();
    },
  };
}

/**
 * Switch the file to WAL. SQLite answers SQLITE_BUSY at once, without calling the busy handler, when another
 * connection holds a lock during the switch — two processes opening a new file together hit this — so the switch
 * is retried here, with async pauses, for up to the busy timeout.
 */
export async function enableWal(db: SqliteDatabase, busyTimeoutMs: number): Promise<void> {
  const deadline = Date.now() + busyTimeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      db.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (error) {
      if (!isSqliteBusy(error) || Date.now() >= deadline) throw error;
      await new Promise((done) => setTimeout(done, Math.min(50, 2 ** attempt) * (0.5 + Math.random())));
    }
  }
}
