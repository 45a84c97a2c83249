import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Message } from "../../contracts/message.js";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import { openSqliteDatabase } from "./open-sqlite-database.js";
import { SQLITE_MIGRATIONS } from "./sqlite-migrations.js";
import { SqliteSessionManager } from "./sqlite-session-manager.js";

// A frozen database file written once by the store at migration level 1 (before run transcripts) and never
// regenerated: if a change to the store stops opening it, files users already have would stop opening too.
// The test works on a copy; the store must migrate it forward and read back exactly what was stored.
const fixture = resolve(
  fileURLToPath(new URL(".", import.meta.url)),
  "../../../test/fixtures/sqlite/store-v1.sqlite",
);
/** The fixture's bytes as committed; a regenerated file fails here. */
const FIXTURE_SHA256 = "82c2e4ee3a9c1ccd90efad27399b9fcf52dbbdf2f53c8d736f4e145239ba6e70";
const root = mkdtempSync(join(tmpdir(), "keel-sqlite-fixtures-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const dbPath = join(root, "store-v1.sqlite");
copyFileSync(fixture, dbPath);

const transcript: Message[] = [
  { role: "user", content: "Add 2 and 40" },
  {
    role: "assistant",
    content: "",
    toolCalls: [{ id: "call-1", name: "add", arguments: { a: 2, b: 40 } }],
  },
  { role: "tool", toolCallId: "call-1", toolName: "add", content: "42" },
  { role: "assistant", content: "2 + 40 = 42" },
];

const record = {
  runId: "run-1",
  agentId: "calculator",
  sessionId: "fixture-session",
  status: "done",
  stopReason: "completed",
  pendingToolCalls: [],
  createdAt: "2026-01-02T10:00:00.000Z",
  updatedAt: "2026-01-02T10:00:05.000Z",
  lastSequence: 4,
};

async function migrationVersions(path: string): Promise<number[]> {
  const db = await openSqliteDatabase(path);
  try {
    return db
      .prepare("SELECT version FROM schema_migrations ORDER BY version")
      .all()
      .map((row) => Number(row.version));
  } finally {
    db.close();
  }
}

describe("sqlite frozen fixture (migration level 1)", () => {
  it("is the frozen file, at migration 1", async () => {
    expect(createHash("sha256").update(readFileSync(fixture)).digest("hex")).toBe(FIXTURE_SHA256);
    // Read from the copy: even a read-only open is not left to touch the fixture.
    expect(await migrationVersions(dbPath)).toEqual([1]);
  });

  it("migrates the copy forward and reads everything back exactly", async () => {
    const manager = await SqliteSessionManager.open({ dbPath });
    try {
      expect(await migrationVersions(dbPath)).toEqual(
        SQLITE_MIGRATIONS.map((migration) => migration.version),
      );
      expect(await manager.listSessions()).toEqual(["fixture-session", "other-session"]);
      expect(await manager.getState("fixture-session")).toEqual({ visits: 2, lastAnswer: "42" });
      expect(await manager.getState("other-session")).toEqual({ note: "kept" });
      expect(await manager.loadMessages("fixture-session")).toEqual(transcript);
      expect(await manager.listArtifacts("fixture-session")).toEqual([
        { name: "sum.txt", kind: "file", payload: "42", metadata: { size: 2 } },
      ]);
      expect(await manager.listCheckpoints("fixture-session")).toEqual(["run-1:step:1"]);
      expect(await manager.loadCheckpoint("fixture-session", "run-1:step:1")).toEqual({
        schemaVersion: 1,
        checkpointId: "run-1:step:1",
        state: { transcript: [transcript[0]], status: "running", lastSequence: 4 },
        transcriptLength: 3,
        artifactCount: 1,
        createdAt: "2026-01-02T10:00:03.500Z",
      });
      expect(await manager.getRun("run-1")).toEqual(record);
      expect(await manager.listRuns({ sessionId: "fixture-session", status: "done" })).toEqual([record]);
      const events = await manager.loadEvents("run-1");
      expect(events.every((event) => event instanceof RuntimeEvent)).toBe(true);
      expect(events.map((event) => event.toJSON())).toEqual([
        event({ kind: "run.started", sequence: 1, timestampMs: 1767348000000, payload: { resumed: false } }),
        event({
          kind: "tool.called",
          sequence: 2,
          timestampMs: 1767348002000,
          payload: { tool_id: "add", params: { a: 2, b: 40 } },
        }),
        event({
          kind: "tool.succeeded",
          sequence: 3,
          timestampMs: 1767348002500,
          payload: { tool_id: "add", result: 42 },
        }),
        event({
          kind: "run.finished",
          sequence: 4,
          timestampMs: 1767348005000,
          payload: { result: { stopReason: "completed" } },
        }),
      ]);
      // A run stored before run transcripts existed has none.
      expect(await manager.loadRunMessages("run-1")).toEqual([]);
    } finally {
      await manager.close();
    }
  });

  it("goes on writing to the migrated copy, and migrates it only once", async () => {
    const manager = await SqliteSessionManager.open({ dbPath });
    try {
      await manager.appendMessage("fixture-session", { role: "user", content: "And 1 more?" });
      await manager.saveRunMessages("run-1", 0, transcript.slice(0, 2));
      await manager.saveRunMessages("run-1", 1, transcript.slice(1));
    } finally {
      await manager.close();
    }
    const reopened = await SqliteSessionManager.open({ dbPath });
    try {
      expect(await migrationVersions(dbPath)).toEqual(
        SQLITE_MIGRATIONS.map((migration) => migration.version),
      );
      expect(await reopened.loadMessages("fixture-session")).toEqual([
        ...transcript,
        { role: "user", content: "And 1 more?" },
      ]);
      expect(await reopened.loadRunMessages("run-1")).toEqual(transcript);
      expect(await reopened.loadRunMessages("run-1", { length: 3 })).toEqual(transcript.slice(0, 3));
    } finally {
      await reopened.close();
    }
  });

  it("left the fixture file untouched", () => {
    expect(createHash("sha256").update(readFileSync(fixture)).digest("hex")).toBe(FIXTURE_SHA256);
  });
});

/** One event of the fixture's run, as the store gives it back. */
function event(fields: {
  kind: string;
  sequence: number;
  timestampMs: number;
  payload: Record<string, unknown>;
}) {
  return { runId: "run-1", sessionId: "fixture-session", agentId: "calculator", ...fields };
}
