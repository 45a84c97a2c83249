import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KeelError } from "../src/errors/keel-error.js";
import { JsonlFileSessionManager } from "../src/stores/jsonl/jsonl-file-session-manager.js";
import { openSqliteDatabase, type SqliteDatabase } from "../src/stores/sqlite/open-sqlite-database.js";
import { SqliteSessionManager } from "../src/stores/sqlite/sqlite-session-manager.js";
import { expectWholeRecords, type Fault, givesUpThenResumes, waitsOut } from "./support/store-faults.js";

/**
 * The file stores on a bad day: SQLite's write lock held by another connection past the busy timeout, and a
 * full disk under SQLite and under JSONL. Each fault comes mid-run, after a tool step. A durable run either
 * waits it out and completes, or — its `durable.store_outage_ms` spent — fails with `store.unavailable` and is
 * resumed to completion once the fault is gone, having lost nothing. The full disk is a small tmpfs, which only
 * root can mount.
 */

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
  let dir: string;
  let store: SqliteSessionManager;
  let blocker: SqliteDatabase;
  const busy: Fault = {
    code: "store.busy",
    apply: () => blocker.exec("BEGIN IMMEDIATE"),
    clear: () => blocker.exec("COMMIT"),
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "keel-busy-"));
    const dbPath = join(dir, "keel.db");
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

  it("is waited out by a durable run", () => waitsOut({ store, fault: busy, runId: "busy-wait" }));

  it("fails a durable run past store_outage_ms, resumable once the lock is let go", () =>
    givesUpThenResumes({ store, fault: busy, runId: "busy-resume" }));
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
      await waitsOut({ store, fault: disk, runId: "sqlite-full-wait" });
      await givesUpThenResumes({ store, fault: disk, runId: "sqlite-full-resume" });
    } finally {
      await store.close();
    }
  });

  it("jsonl: is waited out, past store_outage_ms leaves the run resumable, and no record is torn", async () => {
    const rootDir = join(disk.dir, "jsonl");
    const store = new JsonlFileSessionManager({ rootDir });
    try {
      await waitsOut({ store, fault: disk, runId: "jsonl-full-wait" });
      await givesUpThenResumes({
        store: store,
        fault: disk,
        runId: "jsonl-full-resume",
        whileFailed: () => expectWholeRecords(rootDir),
      });
    } finally {
      await store.close();
    }
    expectWholeRecords(rootDir);
  });
});
