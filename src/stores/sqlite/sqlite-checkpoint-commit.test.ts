import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Message } from "../../contracts/message.js";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import type { CheckpointCommit } from "../../sessions/session-manager.js";
import { stampCheckpoint } from "../../sessions/session-records.js";
import { openSqliteDatabase, type SqliteBindingName } from "./open-sqlite-database.js";
import { type CheckpointCommitRows, checkpointCommitStatement } from "./sqlite-checkpoint-commit.js";
import { SqliteSessionManager } from "./sqlite-session-manager.js";

const root = mkdtempSync(join(tmpdir(), "keel-sqlite-commit-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const freshPath = (): string => join(root, `db-${++files}.db`);

const event = (runId: string, sequence: number) =>
  new RuntimeEvent("step.started", { n: sequence }, 1000 + sequence, runId, "s", "agent", sequence);
const message = (content: string): Message => ({ role: "user", content });

/** Step `step` of run `runId`: its events `2·step + 1` and `2·step + 2`, its message at `fromIndex`. */
function commitOf(runId: string, step: number, fromIndex = step): CheckpointCommit {
  return {
    sessionId: `s-${runId}`,
    runId,
    events: [event(runId, 2 * step + 1), event(runId, 2 * step + 2)],
    messages: { fromIndex, items: [message(`${runId}:${step}@${fromIndex}`)] },
    checkpoint: {
      checkpointId: `${runId}:${step}`,
      state: { step },
      transcriptLength: fromIndex + 1,
      artifactCount: 0,
    },
  };
}

async function stored(manager: SqliteSessionManager, runId: string) {
  return {
    events: (await manager.loadEvents(runId)).map((e) => e.sequence),
    messages: (await manager.loadRunMessages(runId)).map((m) => m.content),
    checkpoints: await manager.listCheckpoints(`s-${runId}`),
    sessions: await manager.listSessions(),
  };
}

// libsql commits a checkpoint as one statement; node:sqlite, where this Node has it, as one transaction.
const bindings: SqliteBindingName[] = process.getBuiltinModule?.("node:sqlite")
  ? ["libsql", "node:sqlite"]
  : ["libsql"];

describe.each(bindings)("a checkpoint commit on %s", (binding) => {
  it("falls back to the checked way when the stored transcript is elsewhere: a rewrite lands, a gap is refused whole", async () => {
    const manager = await SqliteSessionManager.open({ dbPath: freshPath(), binding });
    try {
      await manager.commitCheckpoint(commitOf("r", 0));
      await manager.commitCheckpoint(commitOf("r", 1));
      // Below the stored length: the statement finds 2 messages, not 1, and the checked way rewrites the tail.
      await manager.commitCheckpoint(commitOf("r", 2, 1));
      await expect(manager.commitCheckpoint(commitOf("r", 3, 5))).rejects.toMatchObject({
        code: "store.transcript_gap",
      });
      expect(await stored(manager, "r")).toEqual({
        events: [1, 2, 3, 4, 5, 6],
        messages: ["r:0@0", "r:2@1"],
        checkpoints: ["r:0", "r:1", "r:2"],
        sessions: ["s-r"],
      });
      // And it goes on from there.
      await manager.commitCheckpoint(commitOf("r", 3, 2));
      expect((await stored(manager, "r")).messages).toEqual(["r:0@0", "r:2@1", "r:3@2"]);
    } finally {
      await manager.close();
    }
  });

  it("skips events already stored and replaces a checkpoint in place, as the transaction does", async () => {
    const manager = await SqliteSessionManager.open({ dbPath: freshPath(), binding });
    try {
      await manager.commitCheckpoint(commitOf("r", 0));
      await manager.commitCheckpoint(commitOf("r", 1));
      // A retried step: its events again with other payloads, the next message, and the first checkpoint's id.
      const retried = commitOf("r", 1, 2);
      await manager.commitCheckpoint({
        ...retried,
        events: [3, 4, 5].map((n) => new RuntimeEvent("retried", { n }, 0, "r", "s", "agent", n)),
        checkpoint: { ...retried.checkpoint, checkpointId: "r:0" },
      });
      const events = await manager.loadEvents("r");
      expect(events.map((e) => [e.sequence, e.kind])).toEqual([
        [1, "step.started"],
        [2, "step.started"],
        [3, "step.started"],
        [4, "step.started"],
        [5, "retried"],
      ]);
      expect((await stored(manager, "r")).checkpoints).toEqual(["r:0", "r:1"]);
      expect((await manager.loadCheckpoint("s-r", "r:0"))?.state).toEqual({ step: 1 });
      expect((await stored(manager, "r")).messages).toEqual(["r:0@0", "r:1@1", "r:1@2"]);
    } finally {
      await manager.close();
    }
  });

  it("rolls the whole commit back when the checkpoint's row is refused", async () => {
    const dbPath = freshPath();
    const manager = await SqliteSessionManager.open({ dbPath, binding });
    try {
      await manager.commitCheckpoint(commitOf("r", 0));
      const db = await openSqliteDatabase(dbPath, { binding });
      db.exec(
        "CREATE TRIGGER refuse BEFORE INSERT ON checkpoints WHEN NEW.checkpoint_id = 'r:1' BEGIN SELECT RAISE(ABORT, 'refused'); END",
      );
      db.close();
      await expect(manager.commitCheckpoint(commitOf("r", 1))).rejects.toThrow(/refused/);
      expect(await stored(manager, "r")).toEqual({
        events: [1, 2],
        messages: ["r:0@0"],
        checkpoints: ["r:0"],
        sessions: ["s-r"],
      });
    } finally {
      await manager.close();
    }
  });

  it("fails with store.busy past the busy timeout and leaves the connection able to write and commit", async () => {
    const dbPath = freshPath();
    const manager = await SqliteSessionManager.open({ dbPath, binding, busyTimeoutMs: 20 });
    const other = await openSqliteDatabase(dbPath, { binding });
    try {
      await manager.commitCheckpoint(commitOf("r", 0));
      other.exec("BEGIN IMMEDIATE");
      await expect(manager.commitCheckpoint(commitOf("r", 1))).rejects.toMatchObject({
        code: "store.busy",
        retryable: true,
      });
      other.exec("COMMIT");
      // A statement that could not get the lock, left as it stopped, would keep these from committing.
      await manager.setState("s-r", { after: "busy" });
      await manager.commitCheckpoint(commitOf("r", 1));
      expect(JSON.parse(String(other.prepare("SELECT state FROM sessions").get()?.state))).toEqual({
        after: "busy",
      });
      expect(Number(other.prepare("SELECT count(*) AS n FROM checkpoints").get()?.n)).toBe(2);
      expect(await stored(manager, "r")).toEqual({
        events: [1, 2, 3, 4],
        messages: ["r:0@0", "r:1@1"],
        checkpoints: ["r:0", "r:1"],
        sessions: ["s-r"],
      });
    } finally {
      other.close();
      await manager.close();
    }
  });

  it("waits for another process's write lock, as BEGIN IMMEDIATE does, and lands after its transaction", async () => {
    const dbPath = freshPath();
    const manager = await SqliteSessionManager.open({ dbPath, binding, busyTimeoutMs: 10_000 });
    try {
      await manager.commitCheckpoint(commitOf("r", 0));
      // The other process takes the write lock, writes a checkpoint, and commits a little later.
      const libsql = createRequire(import.meta.url).resolve("libsql");
      const holder = spawn(
        process.execPath,
        [
          "-e",
          `const db = new (require(${JSON.stringify(libsql)}))(process.argv[1]);
           db.exec("BEGIN IMMEDIATE");
           db.prepare("INSERT INTO checkpoints (session_id, checkpoint_id, body, schema_version, created_at) VALUES ('s-r', 'other', '{}', 1, 't')").run();
           console.log("locked");
           setTimeout(() => { db.exec("COMMIT"); db.close(); }, 300);`,
          dbPath,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      const [line] = (await once(holder.stdout, "data")) as [Buffer];
      expect(line.toString().trim()).toBe("locked");
      await manager.commitCheckpoint(commitOf("r", 1));
      await once(holder, "exit");
      expect(await manager.listCheckpoints("s-r")).toEqual(["r:0", "other", "r:1"]);
      expect((await stored(manager, "r")).events).toEqual([1, 2, 3, 4]);
    } finally {
      await manager.close();
    }
  });
});

describe("checkpointCommitStatement", () => {
  const rows = (change: Partial<CheckpointCommitRows>): CheckpointCommitRows => ({
    key: 1,
    sessionId: "s",
    checkpoint: stampCheckpoint({ checkpointId: "c", state: {}, transcriptLength: 1, artifactCount: 0 }),
    body: "{}",
    fromIndex: 0,
    bodies: ["{}"],
    events: [event("r", 1)],
    ...change,
  });

  it("leaves to the checked way what one statement must not decide", () => {
    expect(checkpointCommitStatement(rows({}))).not.toBeNull();
    expect(checkpointCommitStatement(rows({ bodies: null }))).not.toBeNull();
    expect(checkpointCommitStatement(rows({ key: undefined }))).toBeNull();
    // An empty write at an index may cut the transcript.
    expect(checkpointCommitStatement(rows({ bodies: [] }))).toBeNull();
    expect(checkpointCommitStatement(rows({ fromIndex: -1 }))).toBeNull();
    expect(checkpointCommitStatement(rows({ fromIndex: 2 ** 32 - 1, bodies: ["{}", "{}"] }))).toBeNull();
    expect(checkpointCommitStatement(rows({ events: [event("r", 2 ** 32)] }))).toBeNull();
    expect(checkpointCommitStatement(rows({ events: [event("r", 1.5)] }))).toBeNull();
    expect(
      checkpointCommitStatement(rows({ events: [event("r", 1), event("r", 2), event("r", 3)] })),
    ).not.toBeNull();
    expect(checkpointCommitStatement(rows({ events: [event("r", 1), event("r", 3)] }))).toBeNull();
    expect(checkpointCommitStatement(rows({ events: [event("r", 2), event("r", 1)] }))).toBeNull();
    const many = Array.from({ length: 32 }, (_, n) => event("r", n + 1));
    expect(checkpointCommitStatement(rows({ events: many.slice(0, 31) }))).not.toBeNull();
    expect(checkpointCommitStatement(rows({ events: many }))).toBeNull();
  });
});
