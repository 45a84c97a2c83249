import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeelError } from "../src/errors/keel-error.js";
import type { SessionManager } from "../src/sessions/session-manager.js";
import { JsonlFileSessionManager } from "../src/stores/jsonl/jsonl-file-session-manager.js";
import { openSqliteDatabase, type SqliteDatabase } from "../src/stores/sqlite/open-sqlite-database.js";
import { SqliteSessionManager } from "../src/stores/sqlite/sqlite-session-manager.js";
import { type Executions, faultRuntime } from "./support/store-faults.js";

/**
 * The file stores on a bad day: SQLite's write lock held by another connection past the busy timeout, and a
 * full disk under SQLite and under JSONL. Each fault comes mid-run, after a tool step. A durable run either
 * waits it out and completes, or — its `durable.store_outage_ms` spent — fails with `store.unavailable` and is
 * resumed to completion once the fault is gone, having lost nothing. The full disk is a small tmpfs, which only
 * root can mount.
 */

const STEPS = 3;
/** Big enough that the write after a tool result always needs fresh space on the disk. */
const RESULT_BYTES = 20_000;

/** A fault a test brings on mid-run and takes away again, and the store error code it shows as. */
interface Fault {
  code: string;
  apply(): void;
  clear(): void;
}

/** `store`, noting the code of every typed error its calls fail with. */
function observed(store: SessionManager): { store: SessionManager; codes: Set<string> } {
  const codes = new Set<string>();
  const proxy = new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise)
          result.catch((error: unknown) => {
            if (KeelError.isInstance(error)) codes.add(error.code);
          });
        return result;
      };
    },
  });
  return { store: proxy, codes };
}

/** Each stored event log is numbered 1…n and ends with `run.finished`; the run's record says completed. */
async function expectStoredComplete(store: SessionManager, runId: string): Promise<void> {
  const events = await store.loadEvents(runId);
  expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
  expect(events.at(-1)?.kind).toBe("run.finished");
  expect((await store.getRun(runId))?.stopReason).toBe("completed");
}

/** The fault comes after step 2's tool and goes 600 ms later; the run waits and completes, each call run once. */
async function waitsOut(base: SessionManager, fault: Fault, runId: string): Promise<void> {
  const { store, codes } = observed(base);
  const executions: Executions = new Map();
  const runtime = await faultRuntime({
    store,
    executions,
    steps: STEPS,
    toolDelayMs: 5,
    resultBytes: RESULT_BYTES,
    storeOutageMs: 30_000,
    afterStep: (step) => {
      if (step !== 2) return;
      fault.apply();
      setTimeout(() => fault.clear(), 600);
    },
  });
  try {
    const result = await runtime.runDetailed({ agentId: "worker", inputText: "work", durable: true, runId });
    expect(codes).toContain(fault.code);
    expect(result.stopReason).toBe("completed");
    expect([...executions.values()]).toEqual([1, 1, 1]);
    await expectStoredComplete(base, runId);
    console.log(
      `${runId}: the store failed with ${fault.code} for 600 ms; 1/1 run completed, no call ran twice`,
    );
  } finally {
    await runtime.close();
  }
}

/**
 * The fault stays past the run's patience: the run fails with `store.unavailable`, its hint says to resume; once
 * the fault is gone it is resumed and completes. Only the call whose result the store could not take runs again.
 */
async function givesUpThenResumes(base: SessionManager, fault: Fault, runId: string): Promise<void> {
  const { store, codes } = observed(base);
  const executions: Executions = new Map();
  const runtime = await faultRuntime({
    store,
    executions,
    steps: STEPS,
    toolDelayMs: 5,
    resultBytes: RESULT_BYTES,
    storeOutageMs: 300,
    afterStep: (step) => {
      if (step === 2 && !codes.has("store.unavailable")) fault.apply();
    },
  });
  try {
    const failed = await runtime.runDetailed({ agentId: "worker", inputText: "work", durable: true, runId });
    expect(failed.stopReason).toBe("failed");
    expect(failed.errorDetails?.code).toBe("store.unavailable");
    expect(failed.errorDetails?.hint).toMatch(/resume/);
    expect(((failed.exception as KeelError).cause as KeelError).code).toBe(fault.code);
    codes.add("store.unavailable");
    fault.clear();
    const resumed = await runtime.resumeRun(runId);
    expect(resumed.stopReason).toBe("completed");
    expect(executions.get(`${runId}/call1`)).toBe(1);
    expect(executions.get(`${runId}/call2`)).toBeLessThanOrEqual(2);
    expect(executions.get(`${runId}/call3`)).toBe(1);
    await expectStoredComplete(base, runId);
    console.log(
      `${runId}: the store failed with ${fault.code} past store_outage_ms; resumed, 1/1 run completed`,
    );
  } finally {
    await runtime.close();
  }
}

/** Why this process cannot mount a small tmpfs, or null. */
function mountUnavailable(): string | null {
  if (process.getuid?.() !== 0) return "not running as root, which mounting a small tmpfs needs";
  return null;
}

const noMount = mountUnavailable();
if (noMount !== null) console.log(`store-outage-disk: the full-disk tests are skipped, ${noMount}`);

/** A 16 MiB tmpfs: `apply()` fills it, `clear()` frees it again. */
class SmallDisk implements Fault {
  readonly code = "store.disk_full";
  readonly dir = mkdtempSync(join(tmpdir(), "keel-full-"));
  private readonly filler = join(this.dir, "filler");

  constructor() {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", this.dir]);
  }

  apply(): void {
    try {
      writeFileSync(this.filler, Buffer.alloc(32 * 1024 * 1024));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
    }
  }

  clear(): void {
    unlinkSync(this.filler);
  }

  unmount(): void {
    // Lazily: a handle the binding has not let go of yet must not leave the mount behind.
    execFileSync("umount", ["-l", this.dir]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe("sqlite: another connection holds the write lock past the busy timeout", () => {
  const dir = mkdtempSync(join(tmpdir(), "keel-busy-"));
  const dbPath = join(dir, "keel.db");
  let store: SqliteSessionManager;
  let blocker: SqliteDatabase;
  const busy: Fault = {
    code: "store.busy",
    apply: () => blocker.exec("BEGIN IMMEDIATE"),
    clear: () => blocker.exec("COMMIT"),
  };

  beforeAll(async () => {
    store = await SqliteSessionManager.open({ dbPath, busyTimeoutMs: 50 });
    blocker = await openSqliteDatabase(dbPath);
  });

  afterAll(async () => {
    blocker.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("fails a write with store.busy, retryable, with a hint", async () => {
    busy.apply();
    try {
      const error = await store.setState("s", { a: 1 }).then(
        () => null,
        (thrown: unknown) => thrown as KeelError,
      );
      expect(error?.code).toBe("store.busy");
      expect(error?.retryable).toBe(true);
      expect(error?.hint).toMatch(/busy_timeout_ms/);
    } finally {
      busy.clear();
    }
  });

  it("is waited out by a durable run", () => waitsOut(store, busy, "busy-wait"));

  it("fails a durable run past store_outage_ms, resumable once the lock is let go", () =>
    givesUpThenResumes(store, busy, "busy-resume"));
});

describe.skipIf(noMount !== null)("a full disk", () => {
  let disk: SmallDisk;

  beforeAll(() => {
    disk = new SmallDisk();
  });

  afterAll(() => disk.unmount());

  it("sqlite: is waited out, and past store_outage_ms leaves the run resumable", async () => {
    const store = await SqliteSessionManager.open({ dbPath: join(disk.dir, "keel.db") });
    try {
      await waitsOut(store, disk, "sqlite-full-wait");
      await givesUpThenResumes(store, disk, "sqlite-full-resume");
    } finally {
      await store.close();
    }
  });

  it("jsonl: is waited out, past store_outage_ms leaves the run resumable, and no record is torn", async () => {
    const rootDir = join(disk.dir, "jsonl");
    const store = new JsonlFileSessionManager({ rootDir });
    try {
      await waitsOut(store, disk, "jsonl-full-wait");
      await givesUpThenResumes(store, disk, "jsonl-full-resume");
    } finally {
      await store.close();
    }
    for (const folder of ["runs", "sessions"]) {
      for (const name of readdirSync(join(rootDir, folder))) {
        const text = readFileSync(join(rootDir, folder, name), "utf8");
        expect(text.endsWith("\n")).toBe(true);
        for (const line of text.slice(0, -1).split("\n")) expect(() => JSON.parse(line)).not.toThrow();
      }
    }
  });
});
