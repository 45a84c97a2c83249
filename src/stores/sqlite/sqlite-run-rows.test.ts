import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import { openSqliteDatabase } from "./open-sqlite-database.js";
import { migrateSqlite, SQLITE_MIGRATIONS } from "./sqlite-migrations.js";
import { SqliteSessionManager } from "./sqlite-session-manager.js";

const root = mkdtempSync(join(tmpdir(), "keel-sqlite-rows-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const freshPath = (): string => join(root, `db-${++files}.db`);

const event = (runId: string, sequence: number, kind = "step.started") =>
  new RuntimeEvent(kind, { n: sequence }, 1000 + sequence, runId, "s", "agent", sequence);

/** A file at migration level 2 with rows laid out as that level wrote them. */
async function fileAtVersion2(): Promise<string> {
  const dbPath = freshPath();
  const db = await openSqliteDatabase(dbPath);
  try {
    migrateSqlite(db, dbPath, SQLITE_MIGRATIONS.slice(0, 2));
    const body = (sequence: number) =>
      JSON.stringify({
        kind: "step.started",
        runId: "r1",
        sessionId: "s",
        agentId: "agent",
        timestampMs: sequence,
        payload: {},
      });
    const addEvent = db.prepare(
      "INSERT INTO run_events (run_id, sequence, body, schema_version) VALUES (?, ?, ?, 1)",
    );
    // Two runs' rows interleaved, as two runs of one file write them.
    for (const sequence of [1, 2, 3]) {
      addEvent.run("r1", sequence, body(sequence));
      addEvent.run("r2", sequence, body(sequence).replace('"r1"', '"r2"'));
    }
    const addMessage = db.prepare(
      "INSERT INTO run_messages (run_id, idx, body, schema_version) VALUES (?, ?, ?, 1)",
    );
    for (const idx of [0, 1]) addMessage.run("r1", idx, JSON.stringify({ role: "user", content: `m${idx}` }));
    addMessage.run("r3", 0, JSON.stringify({ role: "user", content: "only messages" }));
    const addCheckpoint = db.prepare(
      `INSERT INTO checkpoints (session_id, checkpoint_id, body, schema_version, created_at) VALUES (?, ?, ?, 1, 't')
       ON CONFLICT (session_id, checkpoint_id) DO UPDATE SET body = excluded.body`,
    );
    const checkpoint = (id: string, n: number) =>
      JSON.stringify({
        schemaVersion: 1,
        checkpointId: id,
        state: { n },
        transcriptLength: 0,
        artifactCount: 0,
        createdAt: "t",
      });
    addCheckpoint.run("s", "b", checkpoint("b", 1));
    addCheckpoint.run("s", "a", checkpoint("a", 1));
    addCheckpoint.run("s", "c", checkpoint("c", 1));
    // Replaced in place: it stays second.
    addCheckpoint.run("s", "a", checkpoint("a", 2));
  } finally {
    db.close();
  }
  return dbPath;
}

describe("sqlite run rows (migration level 3)", () => {
  it("migrates a level-2 file's events, transcripts and checkpoints with everything intact", async () => {
    const dbPath = await fileAtVersion2();
    const manager = await SqliteSessionManager.open({ dbPath });
    try {
      const r1 = await manager.loadEvents("r1");
      expect(r1.map((e) => [e.runId, e.sequence, e.timestampMs])).toEqual([
        ["r1", 1, 1],
        ["r1", 2, 2],
        ["r1", 3, 3],
      ]);
      expect((await manager.loadEvents("r2")).map((e) => [e.runId, e.sequence])).toEqual([
        ["r2", 1],
        ["r2", 2],
        ["r2", 3],
      ]);
      expect((await manager.loadEvents("r1", { afterSequence: 1 })).map((e) => e.sequence)).toEqual([2, 3]);
      expect(await manager.loadRunMessages("r1")).toEqual([
        { role: "user", content: "m0" },
        { role: "user", content: "m1" },
      ]);
      expect(await manager.loadRunMessages("r3")).toEqual([{ role: "user", content: "only messages" }]);
      expect(await manager.listCheckpoints("s")).toEqual(["b", "a", "c"]);
      expect((await manager.loadCheckpoint("s", "a"))?.state).toEqual({ n: 2 });

      // It goes on: new rows land after the migrated ones, a replaced checkpoint keeps its place.
      await manager.commitCheckpoint({
        sessionId: "s",
        runId: "r1",
        events: [event("r1", 3), event("r1", 4)],
        messages: {
          fromIndex: 1,
          items: [
            { role: "assistant", content: "m1'" },
            { role: "user", content: "m2" },
          ],
        },
        checkpoint: { checkpointId: "d", state: { n: 1 }, transcriptLength: 3, artifactCount: 0 },
      });
      await manager.createCheckpoint("s", {
        checkpointId: "b",
        state: { n: 9 },
        transcriptLength: 0,
        artifactCount: 0,
      });
      expect(await manager.listCheckpoints("s")).toEqual(["b", "a", "c", "d"]);
      expect((await manager.loadEvents("r1")).map((e) => [e.sequence, e.timestampMs])).toEqual([
        [1, 1],
        [2, 2],
        [3, 3],
        [4, 1004],
      ]);
      expect(await manager.loadRunMessages("r1")).toEqual([
        { role: "user", content: "m0" },
        { role: "assistant", content: "m1'" },
        { role: "user", content: "m2" },
      ]);
      expect((await manager.loadEvents("r2")).length).toBe(3);
    } finally {
      await manager.close();
    }
  });

  it("keeps each run's rows to itself and reads ranges by position", async () => {
    const manager = await SqliteSessionManager.open({ dbPath: freshPath() });
    try {
      await manager.appendEvents("a", [event("a", 1), event("a", 2), event("a", 0xffff_ffff)]);
      await manager.appendEvents("b", [event("b", 1)]);
      expect((await manager.loadEvents("a")).map((e) => e.sequence)).toEqual([1, 2, 0xffff_ffff]);
      expect((await manager.loadEvents("a", { afterSequence: 1.5 })).map((e) => e.sequence)).toEqual([
        2, 0xffff_ffff,
      ]);
      expect(await manager.loadEvents("a", { afterSequence: 0xffff_ffff })).toEqual([]);
      expect((await manager.loadEvents("b", { afterSequence: -5 })).map((e) => e.runId)).toEqual(["b"]);
      expect(await manager.loadEvents("nobody")).toEqual([]);
      await manager.saveRunMessages("b", 0, [{ role: "user", content: "x" }]);
      expect(await manager.loadRunMessages("a")).toEqual([]);
      expect(await manager.loadRunMessages("b", { length: 0 })).toEqual([]);
    } finally {
      await manager.close();
    }
  });

  it("stores batches longer than one statement's rows, skipping the sequences already stored", async () => {
    const manager = await SqliteSessionManager.open({ dbPath: freshPath() });
    try {
      const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
      await manager.appendEvents(
        "a",
        range(1, 20).map((n) => event("a", n)),
      );
      // A retried batch overlapping what is stored: the stored events stay as they were.
      await manager.appendEvents(
        "a",
        range(15, 40).map((n) => event("a", n, n <= 20 ? "retried" : "step.started")),
      );
      const events = await manager.loadEvents("a");
      expect(events.map((e) => e.sequence)).toEqual(range(1, 40));
      expect(events.filter((e) => e.kind === "retried")).toEqual([]);
      const messages = range(0, 36).map((n) => ({ role: "user" as const, content: `m${n}` }));
      await manager.saveRunMessages("a", 0, messages);
      await manager.saveRunMessages("a", 30, messages.slice(0, 3));
      expect(await manager.loadRunMessages("a")).toEqual([...messages.slice(0, 30), ...messages.slice(0, 3)]);
    } finally {
      await manager.close();
    }
  });

  it("refuses a sequence a rowid cannot hold with a typed error, writing nothing", async () => {
    const manager = await SqliteSessionManager.open({ dbPath: freshPath() });
    try {
      await expect(manager.appendEvents("a", [event("a", 1), event("a", 2 ** 32)])).rejects.toMatchObject({
        code: "store.query",
      });
      await expect(manager.appendEvents("a", [event("a", -1)])).rejects.toMatchObject({
        code: "store.query",
      });
      expect(await manager.loadEvents("a")).toEqual([]);
    } finally {
      await manager.close();
    }
  });

  it("remembers a run's key only once its commit is stored: a refused first commit lends it to no one", async () => {
    const manager = await SqliteSessionManager.open({ dbPath: freshPath() });
    const message = (content: string) => ({ role: "user" as const, content });
    const commit = (runId: string, sequence: number, fromIndex: number) =>
      manager.commitCheckpoint({
        sessionId: "s",
        runId,
        events: [event(runId, sequence)],
        messages: { fromIndex, items: [message(`${runId}${fromIndex}`)] },
        checkpoint: {
          checkpointId: `${runId}:${sequence}`,
          state: {},
          transcriptLength: 1,
          artifactCount: 0,
        },
      });
    try {
      // The messages give "a" a key inside the transaction; the event then refuses it, and the key goes with it.
      await expect(commit("a", 2 ** 32, 0)).rejects.toMatchObject({ code: "store.query" });
      await commit("b", 1, 0);
      await commit("a", 1, 0);
      await commit("a", 2, 1);
      // Appended at the stored length, rewritten below it, refused beyond it.
      await commit("b", 2, 1);
      await commit("b", 3, 1);
      await expect(commit("b", 4, 5)).rejects.toMatchObject({ code: "store.transcript_gap" });
      expect((await manager.loadEvents("a")).map((e) => [e.runId, e.sequence])).toEqual([
        ["a", 1],
        ["a", 2],
      ]);
      expect((await manager.loadEvents("b")).map((e) => e.sequence)).toEqual([1, 2, 3]);
      expect(await manager.loadRunMessages("a")).toEqual([message("a0"), message("a1")]);
      expect(await manager.loadRunMessages("b")).toEqual([message("b0"), message("b1")]);
    } finally {
      await manager.close();
    }
  });

  it("writes a checkpoint commit in a handful of WAL pages, not one per table and index", async () => {
    const dbPath = freshPath();
    const manager = await SqliteSessionManager.open({ dbPath });
    try {
      const commit = (step: number) =>
        manager.commitCheckpoint({
          sessionId: "s",
          runId: "r",
          events: [1, 2, 3, 4, 5].map((n) => event("r", step * 5 + n)),
          messages: { fromIndex: step, items: [{ role: "assistant", content: "m".repeat(80) }] },
          checkpoint: {
            checkpointId: `r:step:${step + 1}`,
            state: { padding: "s".repeat(1000) },
            transcriptLength: step + 1,
            artifactCount: 0,
          },
        });
      await commit(0);
      const walBytes = () => statSync(`${dbPath}-wal`).size;
      const before = walBytes();
      const commits = 40;
      for (let step = 1; step <= commits; step++) await commit(step);
      const db = await openSqliteDatabase(dbPath);
      const pageSize = Number(db.prepare("PRAGMA page_size").get()?.page_size);
      db.close();
      const frames = (walBytes() - before) / (pageSize + 24) / commits;
      // The level-2 layout wrote about nine frames here: two b-trees for events, two for messages, two for the
      // checkpoint, sqlite_sequence, and the splits. Level 3 writes about four.
      expect(frames).toBeLessThan(6);
    } finally {
      await manager.close();
    }
  });
});
