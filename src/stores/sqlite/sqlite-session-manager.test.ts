import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import { describeSessionManagerConformance } from "../../testing/session-manager-conformance.js";
import { openSqliteDatabase } from "./open-sqlite-database.js";
import { sqliteStoreConfig } from "./register-sqlite-store.js";
import { SqliteSessionManager } from "./sqlite-session-manager.js";

const root = mkdtempSync(join(tmpdir(), "keel-sqlite-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const freshPath = (): string => join(root, `db-${++files}`, "keel.db");

describeSessionManagerConformance("sqlite", () => new SqliteSessionManager({ dbPath: freshPath() }));

// One file shared by every test's manager: the suite's unique ids must keep them apart.
const sharedPath = freshPath();
describeSessionManagerConformance(
  "sqlite (one shared file)",
  () => new SqliteSessionManager({ dbPath: sharedPath }),
);

describe("SqliteSessionManager", () => {
  it("keeps everything across two manager instances on one file", async () => {
    const dbPath = freshPath();
    const first = await SqliteSessionManager.open({ dbPath });
    await first.session("s", async (scope) => {
      scope.state.count = 1;
    });
    await first.appendMessages("s", [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    await first.saveArtifact("s", { name: "a", kind: "generic", payload: { x: 1 }, metadata: {} });
    await first.createCheckpoint("s", {
      checkpointId: "r:step:1",
      state: { n: 1 },
      transcriptLength: 2,
      artifactCount: 1,
    });
    await first.saveRun({
      runId: "r",
      sessionId: "s",
      agentId: "agent",
      status: "done",
      pendingToolCalls: [],
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:01.000Z",
      lastSequence: 2,
    });
    await first.appendEvents("r", [
      new RuntimeEvent("run.started", { a: 1 }, 10, "r", "s", "agent", 1),
      new RuntimeEvent("run.finished", {}, 11, "r", "s", "agent", 2),
    ]);
    await first.close();

    const second = await SqliteSessionManager.open({ dbPath });
    expect(await second.getState("s")).toEqual({ count: 1 });
    expect(await second.loadMessages("s")).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    expect(await second.listArtifacts("s")).toEqual([
      { name: "a", kind: "generic", payload: { x: 1 }, metadata: {} },
    ]);
    expect(await second.loadCheckpoint("s", "r:step:1")).toMatchObject({ schemaVersion: 1, state: { n: 1 } });
    expect((await second.getRun("r"))?.status).toBe("done");
    const events = await second.loadEvents("r", { afterSequence: 1 });
    expect(events).toHaveLength(1);
    expect(events[0]).toBeInstanceOf(RuntimeEvent);
    expect(events[0]).toMatchObject({ kind: "run.finished", sequence: 2, runId: "r" });
    expect(await second.listSessions()).toEqual(["s"]);
    await second.close();
  });

  it("opens in WAL mode with the configured busy timeout", async () => {
    const dbPath = freshPath();
    const manager = await SqliteSessionManager.open({ dbPath, busyTimeoutMs: 1234 });
    // Node 20 has no node:sqlite; from 22.13 the builtin wins and nothing needs installing.
    expect(manager.bindingName).toBe(process.getBuiltinModule?.("node:sqlite") ? "node:sqlite" : "libsql");
    await manager.close();
    const db = await openSqliteDatabase(dbPath);
    expect(db.prepare("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
    db.close();
  });

  it("refuses a row with schema_version 99 with store.schema_version", async () => {
    const dbPath = freshPath();
    const manager = await SqliteSessionManager.open({ dbPath });
    await manager.setState("future", { a: 1 });
    await manager.appendMessage("future", { role: "user", content: "x" });
    await manager.saveRunMessages("future-run", 0, [{ role: "user", content: "x" }]);
    const db = await openSqliteDatabase(dbPath);
    db.exec(
      "UPDATE sessions SET schema_version = 99; UPDATE messages SET schema_version = 99; UPDATE run_messages SET schema_version = 99",
    );
    db.close();
    await expect(manager.getState("future")).rejects.toMatchObject({
      code: "store.schema_version",
      message: expect.stringMatching(/schema version 99/),
    });
    await expect(manager.loadMessages("future")).rejects.toMatchObject({ code: "store.schema_version" });
    await expect(manager.loadRunMessages("future-run")).rejects.toMatchObject({
      code: "store.schema_version",
    });
    await expect(manager.session("future", async () => "entered")).rejects.toMatchObject({
      code: "store.schema_version",
    });
    await manager.close();
  });

  it("refuses a file migrated by a newer Keel", async () => {
    const dbPath = freshPath();
    await (await SqliteSessionManager.open({ dbPath })).close();
    const db = await openSqliteDatabase(dbPath);
    db.exec("INSERT INTO schema_migrations (version, applied_at) VALUES (99, 'later')");
    db.close();
    await expect(SqliteSessionManager.open({ dbPath })).rejects.toMatchObject({
      code: "store.schema_version",
    });
  });

  it("refuses a damaged body with store.corrupt instead of skipping it", async () => {
    const dbPath = freshPath();
    const manager = await SqliteSessionManager.open({ dbPath });
    await manager.appendMessages("s", [
      { role: "user", content: "1" },
      { role: "user", content: "2" },
    ]);
    const db = await openSqliteDatabase(dbPath);
    db.exec("UPDATE messages SET body = '{\"role\":' WHERE seq = (SELECT min(seq) FROM messages)");
    db.close();
    await expect(manager.loadMessages("s")).rejects.toMatchObject({ code: "store.corrupt" });
    await manager.close();
  });

  it("rolls a checkpoint commit back whole when its last statement fails", async () => {
    const dbPath = freshPath();
    const manager = await SqliteSessionManager.open({ dbPath });
    await manager.saveRunMessages("r", 0, [{ role: "user", content: "kept" }]);
    const db = await openSqliteDatabase(dbPath);
    // The checkpoint is written last, after the events and the messages: refusing it must undo them too.
    db.exec(
      "CREATE TRIGGER refuse BEFORE INSERT ON checkpoints WHEN NEW.checkpoint_id = 'refused' BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    db.close();
    await expect(
      manager.commitCheckpoint({
        sessionId: "s",
        runId: "r",
        events: [new RuntimeEvent("step.started", {}, 10, "r", "s", "agent", 1)],
        messages: { fromIndex: 0, items: [{ role: "user", content: "replaced" }] },
        checkpoint: { checkpointId: "refused", state: {}, transcriptLength: 1, artifactCount: 0 },
      }),
    ).rejects.toThrow(/refused/);
    expect(await manager.loadEvents("r")).toEqual([]);
    expect(await manager.loadRunMessages("r")).toEqual([{ role: "user", content: "kept" }]);
    expect(await manager.listSessions()).toEqual([]);
    await manager.close();
  });

  it("refuses a file that is not a SQLite database with store.corrupt", async () => {
    const dbPath = join(root, "not-a-db.db");
    writeFileSync(dbPath, "this is not a database ".repeat(20));
    await expect(SqliteSessionManager.open({ dbPath })).rejects.toMatchObject({ code: "store.corrupt" });
  });

  it("fails with PluginLoadError and an install hint when no binding can be imported", async () => {
    const importer = async (specifier: string): Promise<never> => {
      const error = new Error(`Cannot find package '${specifier}'`) as NodeJS.ErrnoException;
      error.code = specifier === "node:sqlite" ? "ERR_UNKNOWN_BUILTIN_MODULE" : "ERR_MODULE_NOT_FOUND";
      throw error;
    };
    const manager = new SqliteSessionManager({ dbPath: freshPath(), importer });
    const failure = manager.getState("s");
    await expect(failure).rejects.toMatchObject({ name: "PluginLoadError", hint: "npm install libsql" });
    await expect(failure).rejects.toThrow(/libsql/);
    await expect(SqliteSessionManager.open({ dbPath: freshPath(), importer })).rejects.toMatchObject({
      code: "plugin.load",
    });
  });

  it("falls back to libsql when node:sqlite is missing", async () => {
    const importer = (specifier: string): Promise<unknown> =>
      specifier === "node:sqlite" ? Promise.reject(new Error("no such builtin")) : import(specifier);
    const manager = await SqliteSessionManager.open({ dbPath: freshPath(), importer });
    expect(manager.bindingName).toBe("libsql");
    await manager.setState("s", { ok: true });
    expect(await manager.getState("s")).toEqual({ ok: true });
    await manager.close();
  });

  it("fails later calls with store.closed", async () => {
    const manager = await SqliteSessionManager.open({ dbPath: freshPath() });
    await manager.close();
    await expect(manager.getState("s")).rejects.toMatchObject({ code: "store.closed" });
  });

  it("serialises scopes of two managers on one file in one process", async () => {
    const dbPath = freshPath();
    const managers = [new SqliteSessionManager({ dbPath }), new SqliteSessionManager({ dbPath })];
    await Promise.all(
      managers.map(async (manager) => {
        for (let index = 0; index < 20; index++) {
          await manager.session("counter", async (scope) => {
            const seen = (scope.state.count as number | undefined) ?? 0;
            await new Promise((done) => setTimeout(done, Math.random() * 2));
            scope.state.count = seen + 1;
          });
        }
      }),
    );
    expect(await managers[0]?.getState("counter")).toEqual({ count: 40 });
    await Promise.all(managers.map((manager) => manager.close()));
  });

  it("validates its config with defaults", () => {
    expect(sqliteStoreConfig().parse({ db_path: "keel.db" })).toEqual({
      db_path: "keel.db",
      wal: true,
      synchronous: "NORMAL",
      busy_timeout_ms: 5000,
    });
    expect(() => sqliteStoreConfig().parse({})).toThrow();
    expect(() => sqliteStoreConfig().parse({ db_path: "x", synchronous: "SOMETIMES" })).toThrow();
  });
});
