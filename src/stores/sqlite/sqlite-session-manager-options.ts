import { PluginConfigError } from "../../errors/error-classes.js";
import type { SqliteBindingName, SqliteModuleImporter } from "./open-sqlite-database.js";

/** SQLite `PRAGMA synchronous` levels. */
export type SqliteSynchronous = "OFF" | "NORMAL" | "FULL" | "EXTRA";

/** Options of `SqliteSessionManager`. */
export interface SqliteSessionManagerOptions {
  /** The database file; its directory is created. `:memory:` keeps everything in this manager only. */
  dbPath: string;
  /** Write-ahead logging: readers never block the writer, and a commit is one append. Default true. */
  wal?: boolean;
  /** Default `NORMAL`: with WAL, a power loss may drop the last commits but never corrupts the file. */
  synchronous?: SqliteSynchronous;
  /** How long a write waits for another connection's write lock before `store.busy`. Default 5000. */
  busyTimeoutMs?: number;
  /** Runs allowed to wait per session in this process. Default 1000. */
  queueSize?: number;
  /** Default `auto`: `node:sqlite` when this Node has it, else the `libsql` package. */
  binding?: "auto" | SqliteBindingName;
  /** How bindings are imported; tests inject one to simulate a missing package. */
  importer?: SqliteModuleImporter;
}

const SYNCHRONOUS_LEVELS: ReadonlySet<string> = new Set(["OFF", "NORMAL", "FULL", "EXTRA"]);

/** The level, or a typed error with a hint when it is not one of SQLite's. */
export function checkSynchronous(level: string): SqliteSynchronous {
  if (SYNCHRONOUS_LEVELS.has(level)) return level as SqliteSynchronous;
  throw new PluginConfigError(
    `sqlite store: synchronous must be OFF, NORMAL, FULL or EXTRA, not "${level}"`,
    {
      hint: 'Use synchronous: "NORMAL" (the default) unless you need every commit to survive power loss ("FULL").',
    },
  );
}
