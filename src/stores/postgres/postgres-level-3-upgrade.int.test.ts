import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { Message } from "../../contracts/message.js";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import { migrate, POSTGRES_MIGRATIONS } from "./migrations.js";
import { PostgresSessionManager } from "./postgres-session-manager.js";
import { resolveConnectionString } from "./resolve-connection-string.js";

// A schema at migration level 3 (jsonb documents), written with level 3's own statements and functions, then
// opened by the current store: its rows must come through the rewrite to json exactly, and a process still at
// level 3 must go on committing with the functions it knows. Runs against the real server.
const CONNECTION = resolveConnectionString();
const SCHEMA = `keel_level3_${randomBytes(6).toString("hex")}`;
const admin = new pg.Pool({ connectionString: CONNECTION, max: 2 });

afterAll(async () => {
  await admin.query(`drop schema if exists ${SCHEMA} cascade`);
  await admin.end();
});

const open = () => PostgresSessionManager.open({ connectionString: CONNECTION, schema: SCHEMA, poolSize: 2 });

const transcript: Message[] = [
  { role: "user", content: "Add 2 and 40" },
  { role: "assistant", content: "", toolCalls: [{ id: "call-1", name: "add", arguments: { a: 2, b: 40 } }] },
  { role: "tool", toolCallId: "call-1", toolName: "add", content: "42" },
];

/** An event as level 3 stored it: every field in the body, the sequence too. */
const storedEvent = (runId: string, sequence: number, payload: Record<string, unknown>) => ({
  kind: "step.started",
  runId,
  sessionId: "s-3",
  agentId: "agent",
  sequence,
  timestampMs: 1_767_348_000_000 + sequence,
  payload,
});

/** Level 3's function called as a level-3 process calls it: step `step`'s checkpoint, the transcript whole. */
async function commitAtLevel3(runId: string, step: number, messages: Message[]) {
  const checkpoint = {
    checkpointId: `${runId}:step:${step}`,
    state: { step, note: "caf\u00e9" },
    transcriptLength: messages.length,
    artifactCount: 0,
    schemaVersion: 1,
    createdAt: `2026-01-02T10:00:0${step}.000Z`,
  };
  const { rows } = await admin.query<{ stored: string }>(
    `select ${SCHEMA}.commit_checkpoint($1, $2, $3::jsonb, $4, $5::jsonb, $6, $7::jsonb, $8, $9) as stored`,
    [
      "s-3",
      runId,
      JSON.stringify([storedEvent(runId, step, { step })]),
      0,
      JSON.stringify(messages),
      checkpoint.checkpointId,
      JSON.stringify(checkpoint),
      checkpoint.createdAt,
      1,
    ],
  );
  // The length it found, which a retry of the same transcript finds whole.
  expect(Number(rows[0]?.stored)).toBeLessThanOrEqual(messages.length);
  return checkpoint;
}

describe("postgres schema at migration level 3", () => {
  const levels = POSTGRES_MIGRATIONS.filter((migration) => migration.version <= 3);
  let first: Awaited<ReturnType<typeof commitAtLevel3>>;

  it("is written by level 3's statements", async () => {
    expect(await migrate(admin, SCHEMA, levels)).toEqual([1, 2, 3]);
    first = await commitAtLevel3("run-3", 1, transcript.slice(0, 2));
    await admin.query(`update ${SCHEMA}.sessions set state = $1 where session_id = 's-3'`, [
      JSON.stringify({ visits: 1, nested: { list: [1, 2.5, "x"] } }),
    ]);
    await admin.query(
      `insert into ${SCHEMA}.messages (session_id, body, schema_version) values ('s-3', $1, 1)`,
      [JSON.stringify(transcript[0])],
    );
    await admin.query(
      `insert into ${SCHEMA}.artifacts (session_id, name, body, schema_version) values ('s-3', 'a.txt', $1, 1)`,
      [JSON.stringify({ name: "a.txt", kind: "file", payload: "42" })],
    );
    await admin.query(
      `insert into ${SCHEMA}.runs (run_id, session_id, status, body, schema_version) values ('run-3', 's-3', 'done', $1, 1)`,
      [JSON.stringify({ runId: "run-3", sessionId: "s-3", status: "done" })],
    );
    const { rows } = await admin.query(
      `select data_type from information_schema.columns where table_schema = $1 and column_name = 'body'`,
      [SCHEMA],
    );
    expect(new Set(rows.map((row) => row.data_type))).toEqual(new Set(["jsonb"]));
  });

  it("is upgraded to json bodies with every row read back exactly", async () => {
    const manager = await open();
    try {
      const { rows } = await admin.query(
        `select table_name, data_type from information_schema.columns
         where table_schema = $1 and column_name in ('body', 'state')`,
        [SCHEMA],
      );
      expect(rows).toHaveLength(7);
      expect(new Set(rows.map((row) => row.data_type))).toEqual(new Set(["json"]));
      expect(await manager.getState("s-3")).toEqual({ visits: 1, nested: { list: [1, 2.5, "x"] } });
      expect(await manager.loadMessages("s-3")).toEqual([transcript[0]]);
      expect(await manager.listArtifacts("s-3")).toEqual([{ name: "a.txt", kind: "file", payload: "42" }]);
      expect(await manager.getRun("run-3")).toEqual({ runId: "run-3", sessionId: "s-3", status: "done" });
      expect(await manager.loadCheckpoint("s-3", first.checkpointId)).toEqual(first);
      expect(await manager.loadRunMessages("run-3")).toEqual(transcript.slice(0, 2));
      expect((await manager.loadEvents("run-3")).map((event) => event.toJSON())).toEqual([
        storedEvent("run-3", 1, { step: 1 }),
      ]);

      // The current commit goes on after the upgraded rows.
      await manager.commitCheckpoint({
        sessionId: "s-3",
        runId: "run-3",
        events: [
          new RuntimeEvent("step.started", { step: 2 }, 1_767_348_000_002, "run-3", "s-3", "agent", 2),
        ],
        messages: { fromIndex: 2, items: [transcript[2] as Message] },
        checkpoint: {
          checkpointId: "run-3:step:2",
          state: { step: 2 },
          transcriptLength: 3,
          artifactCount: 0,
        },
      });
      expect(await manager.listCheckpoints("s-3")).toEqual([first.checkpointId, "run-3:step:2"]);
      expect(await manager.loadRunMessages("run-3")).toEqual(transcript);
    } finally {
      await manager.close();
    }
  });

  it("still takes commits from a process at level 3, through the functions it knows", async () => {
    const again = await commitAtLevel3("run-3b", 1, transcript);
    // A retried level-3 commit is skipped and replaced as before.
    await commitAtLevel3("run-3b", 1, transcript);
    const manager = await open();
    try {
      expect(await manager.loadCheckpoint("s-3", again.checkpointId)).toEqual(again);
      expect(await manager.loadRunMessages("run-3b")).toEqual(transcript);
      expect((await manager.loadEvents("run-3b")).map((event) => event.sequence)).toEqual([1]);
      const { rows } = await admin.query(`select version from ${SCHEMA}.schema_migrations order by version`);
      expect(rows.map((row) => row.version)).toEqual(
        POSTGRES_MIGRATIONS.map((migration) => migration.version),
      );
    } finally {
      await manager.close();
    }
  });
});
