import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { Message } from "../../contracts/message.js";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import { POSTGRES_MIGRATIONS } from "./migrations.js";
import { PostgresSessionManager } from "./postgres-session-manager.js";
import { resolveConnectionString } from "./resolve-connection-string.js";

// A frozen SQL file written by hand at migration level 1 (before run transcripts) and never regenerated: if a
// change to the store stops reading it, databases users already have would stop working too. It is loaded into
// a fresh schema of its own, which the store must migrate forward and read back exactly. Runs against the real
// server, like the other integration tests.
const fixture = resolve(
  fileURLToPath(new URL(".", import.meta.url)),
  "../../../test/fixtures/postgres/store-v1.sql",
);
const CONNECTION = resolveConnectionString();
const SCHEMA = `keel_fixture_${randomBytes(6).toString("hex")}`;
const admin = new pg.Pool({ connectionString: CONNECTION, max: 2 });

afterAll(async () => {
  await admin.query(`drop schema if exists ${SCHEMA} cascade`);
  await admin.end();
});

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

async function migrationVersions(): Promise<number[]> {
  const { rows } = await admin.query<{ version: number }>(
    `select version from ${SCHEMA}.schema_migrations order by version`,
  );
  return rows.map((row) => row.version);
}

const open = () => PostgresSessionManager.open({ connectionString: CONNECTION, schema: SCHEMA, poolSize: 2 });

describe("postgres frozen fixture (migration level 1)", () => {
  it("loads into a fresh schema at migration 1", async () => {
    const client = await admin.connect();
    try {
      await client.query(`create schema ${SCHEMA}`);
      await client.query(`set search_path to ${SCHEMA}`);
      await client.query(readFileSync(fixture, "utf8"));
    } finally {
      // The search_path stays with the connection: close it rather than pool it.
      client.release(true);
    }
    expect(await migrationVersions()).toEqual([1]);
  });

  it("migrates the schema forward and reads everything back exactly", async () => {
    const manager = await open();
    try {
      expect(await migrationVersions()).toEqual(POSTGRES_MIGRATIONS.map((migration) => migration.version));
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

  it("goes on writing to the migrated schema, and migrates it only once", async () => {
    const manager = await open();
    try {
      // The serial columns go on after the fixture's rows.
      await manager.appendMessage("fixture-session", { role: "user", content: "And 1 more?" });
      await manager.saveRunMessages("run-1", 0, transcript.slice(0, 2));
      await manager.saveRunMessages("run-1", 1, transcript.slice(1));
      await expect(manager.saveRunMessages("run-1", 5, [])).rejects.toMatchObject({
        code: "store.transcript_gap",
      });
    } finally {
      await manager.close();
    }
    const reopened = await open();
    try {
      expect(await migrationVersions()).toEqual(POSTGRES_MIGRATIONS.map((migration) => migration.version));
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
