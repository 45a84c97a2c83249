import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileForChildren } from "../../../test/support/compile-for-children.js";
import { isProcessAlive } from "../jsonl/acquire-file-lock.js";
import { openSqliteDatabase } from "./open-sqlite-database.js";
import { SqliteSessionManager } from "./sqlite-session-manager.js";

const run = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), "keel-sqlite-xproc-"));
const script = join(root, "increment.mjs");
afterAll(() => rmSync(root, { recursive: true, force: true }));

beforeAll(() => {
  const entry = join(compileForChildren(root), "stores/sqlite/sqlite-session-manager.js");
  writeFileSync(
    script,
    `import { SqliteSessionManager } from ${JSON.stringify(entry)};
const [dbPath, sessionId, count] = process.argv.slice(2);
const manager = await SqliteSessionManager.open({ dbPath });
for (let index = 0; index < Number(count); index++) {
  await manager.session(sessionId, async (scope) => {
    const seen = scope.state.counter ?? 0;
    // Widen the read-modify-write window so a missing lock would lose updates.
    await new Promise((done) => setTimeout(done, Math.random() * 2));
    scope.state.counter = seen + 1;
    scope.state[process.pid] = (scope.state[process.pid] ?? 0) + 1;
  });
}
await manager.appendMessage(sessionId, { role: "user", content: String(process.pid) });
await manager.close();
`,
  );
}, 120_000);

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  expect(isProcessAlive(child.pid as number)).toBe(false);
  return child.pid as number;
}

/** A session lock as a process holding (or having left) it wrote it. */
interface LockRow {
  sessionId: string;
  pid: number;
  owner: string;
}

async function insertLockRow(dbPath: string, { sessionId, pid, owner }: LockRow): Promise<void> {
  const db = await openSqliteDatabase(dbPath);
  db.prepare("INSERT INTO session_locks (session_id, owner, pid, acquired_at) VALUES (?, ?, ?, ?)").run(
    sessionId,
    owner,
    pid,
    new Date().toISOString(),
  );
  db.close();
}

async function lockRows(dbPath: string): Promise<number> {
  const db = await openSqliteDatabase(dbPath);
  const count = Number(db.prepare("SELECT count(*) AS n FROM session_locks").get()?.n);
  db.close();
  return count;
}

describe("SqliteSessionManager across processes", () => {
  it("serialises session() scopes of two processes: 2 × 50 increments make 100", async () => {
    const dbPath = join(root, "counter", "keel.db");
    // Migrate first, so the children do not also race to create the schema (which they would survive).
    await (await SqliteSessionManager.open({ dbPath })).close();
    const sessionId = "Shared Session";
    await Promise.all([0, 1].map(() => run(process.execPath, [script, dbPath, sessionId, "50"])));
    const manager = await SqliteSessionManager.open({ dbPath });
    const state = await manager.getState(sessionId);
    expect(state.counter).toBe(100);
    expect(Object.values(state).filter((value) => value === 50)).toHaveLength(2);
    expect(await manager.loadMessages(sessionId)).toHaveLength(2);
    await manager.close();
    expect(await lockRows(dbPath)).toBe(0);
  }, 60_000);

  it("migrates a new file safely when two processes open it at once", async () => {
    const dbPath = join(root, "race", "keel.db");
    await Promise.all([0, 1].map(() => run(process.execPath, [script, dbPath, "s", "5"])));
    const manager = await SqliteSessionManager.open({ dbPath });
    expect((await manager.getState("s")).counter).toBe(10);
    await manager.close();
  }, 60_000);

  it("takes over a lock row left by a dead process", async () => {
    const dbPath = join(root, "stale", "keel.db");
    const manager = await SqliteSessionManager.open({ dbPath });
    await insertLockRow(dbPath, { sessionId: "s", pid: deadPid(), owner: "left-behind" });
    const started = Date.now();
    await manager.session("s", async (scope) => {
      scope.state.ok = true;
    });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await manager.getState("s")).toEqual({ ok: true });
    await manager.close();
    expect(await lockRows(dbPath)).toBe(0);
  });

  it("waits for a lock row held by a live process and proceeds once it is gone", async () => {
    const dbPath = join(root, "live", "keel.db");
    const manager = await SqliteSessionManager.open({ dbPath });
    await insertLockRow(dbPath, { sessionId: "s", pid: process.pid, owner: "someone-else" });
    let entered = false;
    const scope = manager.session("s", async () => {
      entered = true;
    });
    // Another session's lock is another row: it is not held up.
    await manager.session("other", async () => {});
    await new Promise((done) => setTimeout(done, 100));
    expect(entered).toBe(false);
    const db = await openSqliteDatabase(dbPath);
    db.exec("DELETE FROM session_locks");
    db.close();
    await scope;
    expect(entered).toBe(true);
    await manager.close();
  });

  it("gives up waiting for another process's lock row when the scope's signal aborts", async () => {
    const dbPath = join(root, "abort", "keel.db");
    const manager = await SqliteSessionManager.open({ dbPath });
    await insertLockRow(dbPath, { sessionId: "s", pid: process.pid, owner: "someone-else" });
    const controller = new AbortController();
    const waiting = manager.session("s", async () => "entered", { signal: controller.signal });
    const reason = new Error("gave up");
    setTimeout(() => controller.abort(reason), 20);
    await expect(waiting).rejects.toBe(reason);
    const db = await openSqliteDatabase(dbPath);
    db.exec("DELETE FROM session_locks");
    db.close();
    expect(await manager.session("s", async () => "free")).toBe("free");
    await manager.close();
  });
});
