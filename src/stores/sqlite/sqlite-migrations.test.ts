import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import { storedEventOf } from "../../sessions/session-records.js";
import { openSqliteDatabase } from "./open-sqlite-database.js";
import { migrateSqlite, SQLITE_MIGRATIONS } from "./sqlite-migrations.js";
import { SqliteSessionManager } from "./sqlite-session-manager.js";

const root = mkdtempSync(join(tmpdir(), "keel-sqlite-migrations-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const freshPath = (): string => join(root, `db-${++files}.db`);

const event = (runId: string, sequence: number) =>
  new RuntimeEvent("step.started", { n: sequence }, 1000 + sequence, runId, "s", "agent", sequence);

const checkpoint = (checkpointId: string, n: number) => ({
  checkpointId,
  state: { n },
  transcriptLength: 0,
  artifactCount: 0,
});

describe("sqlite migration level 4: a checkpoint's session row by trigger", () => {
  it("migrates a level-3 file with its rows, and its checkpoints then make their sessions", async () => {
    const dbPath = freshPath();
    const db = await openSqliteDatabase(dbPath);
    try {
      migrateSqlite(db, dbPath, SQLITE_MIGRATIONS.slice(0, 3));
      db.prepare(
        `INSERT INTO sessions (session_id, state, schema_version, created_at, updated_at)
         VALUES ('kept', '{"x":1}', 1, 't', 't')`,
      ).run();
      db.prepare(
        `INSERT INTO checkpoints (session_id, checkpoint_id, body, schema_version, created_at)
         VALUES ('kept', 'c1', ?, 1, 't')`,
      ).run(JSON.stringify({ schemaVersion: 1, ...checkpoint("c1", 1), createdAt: "t" }));
    } finally {
      db.close();
    }
    const manager = await SqliteSessionManager.open({ dbPath });
    try {
      expect(await manager.getState("kept")).toEqual({ x: 1 });
      expect((await manager.loadCheckpoint("kept", "c1"))?.state).toEqual({ n: 1 });
      // A checkpoint of a session without a row makes the row, as a commit of one does.
      await manager.createCheckpoint("fresh", checkpoint("c1", 2));
      await manager.commitCheckpoint({
        sessionId: "committed",
        runId: "r",
        events: [event("r", 1)],
        messages: null,
        checkpoint: checkpoint("c1", 3),
      });
      expect(await manager.listSessions()).toEqual(["kept", "fresh", "committed"]);
      expect(await manager.getState("fresh")).toEqual({});
      // A session's row that went missing under its checkpoint comes back when the checkpoint is replaced.
      await manager.setState("kept", { x: 2 });
      const raw = await openSqliteDatabase(dbPath);
      raw.prepare("DELETE FROM sessions WHERE session_id = 'kept'").run();
      raw.close();
      await manager.createCheckpoint("kept", checkpoint("c1", 4));
      expect(await manager.listSessions()).toEqual(["fresh", "committed", "kept"]);
      expect(await manager.getState("kept")).toEqual({});
      expect((await manager.loadCheckpoint("kept", "c1"))?.state).toEqual({ n: 4 });
    } finally {
      await manager.close();
    }
  });

  it("leaves no session row behind when a checkpoint commit is refused", async () => {
    const manager = await SqliteSessionManager.open({ dbPath: freshPath() });
    try {
      await expect(
        manager.commitCheckpoint({
          sessionId: "s",
          runId: "r",
          events: [event("r", 1)],
          messages: { fromIndex: 3, items: [{ role: "user", content: "gap" }] },
          checkpoint: checkpoint("c1", 1),
        }),
      ).rejects.toMatchObject({ code: "store.transcript_gap" });
      expect(await manager.listSessions()).toEqual([]);
      expect(await manager.loadEvents("r")).toEqual([]);
    } finally {
      await manager.close();
    }
  });
});

describe("sqlite migration level 5: a checkpoint commit as one statement", () => {
  it("migrates a level-4 file with its rows, and its runs' commits go on where they were", async () => {
    const dbPath = freshPath();
    const db = await openSqliteDatabase(dbPath);
    const stored = (value: unknown) => JSON.stringify(value);
    try {
      migrateSqlite(db, dbPath, SQLITE_MIGRATIONS.slice(0, 4));
      db.prepare("INSERT INTO run_keys (run_key, run_id) VALUES (7, 'r')").run();
      for (const sequence of [1, 2]) {
        db.prepare("INSERT INTO run_events (id, body, schema_version) VALUES ((7 << 32) | ?, ?, 1)").run(
          sequence,
          stored(storedEventOf(event("r", sequence))),
        );
      }
      db.prepare("INSERT INTO run_messages (id, body, schema_version) VALUES ((7 << 32) | 0, ?, 1)").run(
        stored({ role: "user", content: "m0" }),
      );
      db.prepare(
        `INSERT INTO checkpoints (session_id, checkpoint_id, body, schema_version, created_at)
         VALUES ('s', 'c1', ?, 1, 't')`,
      ).run(stored({ schemaVersion: 1, ...checkpoint("c1", 1), transcriptLength: 1, createdAt: "t" }));
    } finally {
      db.close();
    }
    const manager = await SqliteSessionManager.open({ dbPath });
    const commit = (step: number) =>
      manager.commitCheckpoint({
        sessionId: "s",
        runId: "r",
        events: [event("r", 2 * step + 1), event("r", 2 * step + 2)],
        messages: { fromIndex: step, items: [{ role: "assistant", content: `m${step}` }] },
        checkpoint: { ...checkpoint(`c${step + 1}`, step + 1), transcriptLength: step + 1 },
      });
    try {
      expect(await manager.listSessions()).toEqual(["s"]);
      // The first commit learns the run's key the checked way, the next ones are one statement each.
      for (const step of [1, 2, 3]) await commit(step);
      expect((await manager.loadEvents("r")).map((e) => [e.sequence, e.timestampMs])).toEqual(
        [1, 2, 3, 4, 5, 6, 7, 8].map((n) => [n, 1000 + n]),
      );
      expect((await manager.loadRunMessages("r")).map((m) => m.content)).toEqual(["m0", "m1", "m2", "m3"]);
      expect(await manager.listCheckpoints("s")).toEqual(["c1", "c2", "c3", "c4"]);
      expect((await manager.loadCheckpoint("s", "c4"))?.transcriptLength).toBe(4);
    } finally {
      await manager.close();
    }
    const raw = await openSqliteDatabase(dbPath);
    try {
      const versions = raw.prepare("SELECT version FROM schema_migrations ORDER BY version").all();
      expect(versions.map((row) => Number(row.version))).toEqual([1, 2, 3, 4, 5]);
    } finally {
      raw.close();
    }
  });
});
