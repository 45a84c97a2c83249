import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect } from "vitest";
import type { SuspendedToolCall } from "../../src/contracts/run-types.js";
import type { RuntimeEvent } from "../../src/index.js";
import type { SessionManager } from "../../src/sessions/session-manager.js";
import { JsonlFileSessionManager } from "../../src/stores/jsonl/jsonl-file-session-manager.js";
import { PostgresSessionManager } from "../../src/stores/postgres/postgres-session-manager.js";
import { resolveConnectionString } from "../../src/stores/postgres/resolve-connection-string.js";
import { SqliteSessionManager } from "../../src/stores/sqlite/sqlite-session-manager.js";
import { compileForChildren, repoRoot } from "./compile-for-children.js";

/**
 * What cross-process tests share: the persistent stores a child process and the test both open, and spawning
 * child scripts (test/support/*.mjs, see child-common.mjs) that print `@@result <json>` lines.
 */

/** A persistent store type; each `which` names a store of its own (a directory, a database, a schema). */
export interface StoreKind {
  type: "jsonl_file" | "sqlite" | "postgres";
  /** The `session` config a child's runtime is given. */
  config(which: string): Record<string, unknown>;
  /** The same store opened in this process, to inspect what the children left. */
  open(which: string): Promise<SessionManager>;
}

/**
 * The jsonl_file, sqlite and postgres stores under `root`. Postgres is the real server, a fresh schema for each
 * `which`; `drop()` drops them (call it in afterAll).
 */
export function persistentStores(root: string): { stores: StoreKind[]; drop(): Promise<void> } {
  const url = resolveConnectionString();
  const base = `keel_test_${randomBytes(6).toString("hex")}`;
  const schemas = new Set<string>();
  const pgSchema = (which: string) => {
    const schema = `${base}_${which.replace(/[^a-z0-9_]/gi, "_")}`;
    schemas.add(schema);
    return schema;
  };
  const sqlitePath = (which: string) => {
    const dir = join(root, "sqlite", which);
    mkdirSync(dir, { recursive: true });
    return join(dir, "keel.db");
  };
  const stores: StoreKind[] = [
    {
      type: "jsonl_file",
      config: (which) => ({ root_dir: join(root, "jsonl", which) }),
      open: async (which) => new JsonlFileSessionManager({ rootDir: join(root, "jsonl", which) }),
    },
    {
      type: "sqlite",
      config: (which) => ({ db_path: sqlitePath(which) }),
      open: (which) => SqliteSessionManager.open({ dbPath: sqlitePath(which) }),
    },
    {
      type: "postgres",
      config: (which) => ({ connection_string: url, schema: pgSchema(which), pool_size: 4 }),
      open: (which) =>
        PostgresSessionManager.open({ connectionString: url, schema: pgSchema(which), poolSize: 2 }),
    },
  ];
  const drop = async () => {
    if (schemas.size === 0) return;
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    try {
      for (const schema of schemas) await admin.query(`drop schema if exists ${schema} cascade`);
    } finally {
      await admin.end();
    }
  };
  return { stores, drop };
}

/** Open a store, use it, close it. */
export async function withStore<T>(
  kind: StoreKind,
  which: string,
  use: (store: SessionManager) => Promise<T>,
): Promise<T> {
  const store = await kind.open(which);
  try {
    return await use(store);
  } finally {
    await store.close?.();
  }
}

/** A RunResult as a child prints it (`resultSummary` in child-common.mjs). */
export interface ChildRunResult {
  stopReason: string;
  finalOutput: unknown;
  error: string | null;
  pendingToolCalls: SuspendedToolCall[];
  toolCalls: number;
  sessionId: string;
}

export interface Child {
  process: ChildProcess;
  stdout: string;
  stderr: string;
  /** Settles once the process is gone and reaped: only then does a lock left by its pid read as stale. */
  exit: Promise<number | null>;
}

/** Start `node <script> <buildDir> <spec as JSON>` from the repository's root. */
export function spawnChild(script: string, buildDir: string, spec: unknown): Child {
  const process_ = spawn(process.execPath, [join(repoRoot, script), buildDir, JSON.stringify(spec)], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const child: Child = {
    process: process_,
    stdout: "",
    stderr: "",
    exit: new Promise((resolve) => process_.on("exit", (code) => resolve(code))),
  };
  process_.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    child.stdout += chunk;
  });
  process_.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    child.stderr += chunk;
  });
  return child;
}

/** Run a child to its end, exit code 0, and return the JSON of each line it printed as `@@result <json>`. */
export async function runChild(script: string, buildDir: string, spec: unknown): Promise<unknown[]> {
  const child = spawnChild(script, buildDir, spec);
  const code = await child.exit;
  const prefix = "@@result ";
  const lines = child.stdout.split("\n").filter((text) => text.startsWith(prefix));
  if (code !== 0 || lines.length === 0) {
    throw new Error(
      `The child ${JSON.stringify(spec)} exited with ${code}\n${child.stdout}\n${child.stderr}`,
    );
  }
  return lines.map((line) => JSON.parse(line.slice(prefix.length)));
}

/** Poll, never time: a child's start-up takes what it takes on a loaded machine. */
export async function waitFor(
  condition: () => boolean,
  what: () => string,
  timeoutMs = 30_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`Timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A ledger file's lines (tools append one line per thing they do); none when there is no file. */
export function readLedger(path: string): string[] {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
}

/** A run's stored events, checked to be numbered 1, 2, 3… without a gap and to end with `run.finished`. */
export async function gaplessEvents(store: SessionManager, runId: string): Promise<RuntimeEvent[]> {
  const events = await store.loadEvents(runId);
  expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
  expect(events.at(-1)?.kind).toBe("run.finished");
  return events;
}

/**
 * A cross-process test file's set-up: a temp root, the persistent stores under it, and Keel compiled for the
 * children before the file's tests (`build()` is its directory); afterwards the schemas and the root go.
 */
export function childProcessSuite(prefix: string): {
  root: string;
  stores: StoreKind[];
  build(): string;
} {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const { stores, drop } = persistentStores(root);
  let buildDir = "";
  beforeAll(() => {
    buildDir = compileForChildren(root);
  }, 120_000);
  afterAll(async () => {
    await drop();
    rmSync(root, { recursive: true, force: true });
  });
  return { root, stores, build: () => buildDir };
}
