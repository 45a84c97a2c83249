import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { Message } from "../../contracts/message.js";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import { getPlugin } from "../../plugins/plugin-registry.js";
import { describeSessionManagerConformance } from "../../testing/session-manager-conformance.js";
import { migrate, POSTGRES_MIGRATIONS } from "./migrations.js";
import { PostgresSessionManager } from "./postgres-session-manager.js";
import { registerPostgresStore } from "./register-postgres-store.js";
import { resolveConnectionString } from "./resolve-connection-string.js";
import { redactConnectionString } from "./to-store-error.js";

// Runs against the real server: an unreachable one fails these tests rather than skipping them.
const URL = resolveConnectionString();
const SCHEMA = `keel_test_${randomBytes(6).toString("hex")}`;
const admin = new pg.Pool({ connectionString: URL, max: 2 });

afterAll(async () => {
  await admin.query(`drop schema if exists ${SCHEMA} cascade`);
  await admin.query(`drop schema if exists ${SCHEMA}_m cascade`);
  await admin.end();
});

const open = (options: { lockTimeoutMs?: number } = {}) =>
  PostgresSessionManager.open({ connectionString: URL, schema: SCHEMA, poolSize: 4, ...options });

describeSessionManagerConformance("postgres", () => open());

describe("PostgresSessionManager", () => {
  // Built without connecting: with the server down every test below fails on its own instead of being skipped.
  const manager = new PostgresSessionManager({ connectionString: URL, schema: SCHEMA, poolSize: 4 });
  afterAll(async () => {
    await manager.close();
  });

  it("migrates idempotently, also when two callers migrate at once", async () => {
    const schema = `${SCHEMA}_m`;
    const [poolA, poolB] = [new pg.Pool({ connectionString: URL }), new pg.Pool({ connectionString: URL })];
    try {
      const applied = await Promise.all([migrate(poolA, schema), migrate(poolB, schema)]);
      // Exactly one of the two applied the migrations; the other waited and found them done.
      expect(applied.flat().sort()).toEqual(POSTGRES_MIGRATIONS.map((migration) => migration.version));
      expect(await migrate(poolA, schema)).toEqual([]);
      const { rows } = await poolA.query(`select version from ${schema}.schema_migrations order by version`);
      expect(rows.map((row) => row.version)).toEqual(
        POSTGRES_MIGRATIONS.map((migration) => migration.version),
      );
    } finally {
      await Promise.all([poolA.end(), poolB.end()]);
    }
  });

  it("serialises read-modify-write scopes across managers with separate pools", async () => {
    const sessionId = `counter-${randomUUID()}`;
    const [first, second] = await Promise.all([open(), open()]);
    try {
      const increments = (store: PostgresSessionManager) => async () => {
        for (let index = 0; index < 50; index++) {
          await store.session(sessionId, async (scope) => {
            const count = (scope.state.count as number | undefined) ?? 0;
            // Yield between the read and the write, so an unserialised pair would lose updates.
            await new Promise((done) => setTimeout(done, 1));
            scope.state.count = count + 1;
          });
        }
      };
      await Promise.all([increments(first)(), increments(second)()]);
      expect(await manager.getState(sessionId)).toEqual({ count: 100 });
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("refuses a session held by another process once lock_timeout_ms passes", async () => {
    const sessionId = `held-${randomUUID()}`;
    const impatient = await open({ lockTimeoutMs: 100 });
    let letGo!: () => void;
    const holding = new Promise<void>((done) => {
      letGo = done;
    });
    let entered!: () => void;
    const inside = new Promise<void>((done) => {
      entered = done;
    });
    try {
      const holder = manager.session(sessionId, async () => {
        entered();
        await holding;
      });
      await inside;
      await expect(impatient.session(sessionId, async () => "never")).rejects.toMatchObject({
        code: "store.lock_timeout",
        retryable: true,
      });
      letGo();
      await holder;
      expect(await impatient.session(sessionId, async () => "after")).toBe("after");
    } finally {
      await impatient.close();
    }
  });

  it("stores a retried batch of events once", async () => {
    const runId = `run-${randomUUID()}`;
    const batch = [1, 2, 3].map(
      (sequence) =>
        new RuntimeEvent("step.started", { step: sequence }, 1_700_000_000_000, runId, "s", "a", sequence),
    );
    await manager.appendEvents(runId, batch);
    await manager.appendEvents(runId, batch);
    await manager.appendEvents(runId, batch.slice(1));
    const loaded = await manager.loadEvents(runId);
    expect(loaded.map((event) => event.sequence)).toEqual([1, 2, 3]);
    expect(loaded[2]).toBeInstanceOf(RuntimeEvent);
    expect(loaded[2]?.toJSON()).toEqual(batch[2]?.toJSON());
  });

  it("serialises concurrent saves of one run's transcript across managers", async () => {
    const runId = `transcript-${randomUUID()}`;
    const [first, second] = await Promise.all([open(), open()]);
    try {
      const batch = (writer: string, size: number): Message[] =>
        Array.from({ length: size }, (_, index) => ({ role: "user", content: `${writer}:${index}` }));
      // Every save rewrites the whole transcript: interleaved deletes and inserts would collide on (run_id, idx)
      // or leave a mix of writers behind.
      await Promise.all(
        Array.from({ length: 40 }, (_, index) =>
          (index % 2 === 0 ? first : second).saveRunMessages(runId, 0, batch(`w${index}`, 1 + (index % 5))),
        ),
      );
      const stored = await manager.loadRunMessages(runId);
      const writer = String(stored[0]?.content).split(":")[0] as string;
      expect(stored).toEqual(batch(writer, stored.length));
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("upserts a retried checkpoint and run record instead of duplicating them", async () => {
    const sessionId = `upsert-${randomUUID()}`;
    const checkpoint = {
      checkpointId: "run:step:1",
      state: { step: 1 },
      transcriptLength: 1,
      artifactCount: 0,
    };
    await manager.createCheckpoint(sessionId, checkpoint);
    await manager.createCheckpoint(sessionId, { ...checkpoint, state: { step: 1, retried: true } });
    expect(await manager.listCheckpoints(sessionId)).toEqual(["run:step:1"]);
    expect((await manager.loadCheckpoint(sessionId, "run:step:1"))?.state).toEqual({
      step: 1,
      retried: true,
    });
  });

  it("rolls a checkpoint commit back whole when its last statement fails", async () => {
    const [sessionId, runId] = [`commit-${randomUUID()}`, `commit-${randomUUID()}`];
    await manager.saveRunMessages(runId, 0, [{ role: "user", content: "kept" }]);
    // The checkpoint is written last, after the events and the messages: refusing it must undo them too.
    const trigger = `refuse_${randomBytes(4).toString("hex")}`;
    await admin.query(
      `create function ${SCHEMA}.${trigger}() returns trigger language plpgsql as $$
       begin raise exception 'refused by the test'; end $$;
       create trigger ${trigger} before insert on ${SCHEMA}.checkpoints
       for each row when (new.session_id = '${sessionId}') execute function ${SCHEMA}.${trigger}()`,
    );
    try {
      await expect(
        manager.commitCheckpoint({
          sessionId,
          runId,
          events: [new RuntimeEvent("step.started", {}, 10, runId, sessionId, "agent", 1)],
          messages: { fromIndex: 0, items: [{ role: "user", content: "replaced" }] },
          checkpoint: { checkpointId: "refused", state: {}, transcriptLength: 1, artifactCount: 0 },
        }),
      ).rejects.toThrow(/refused by the test/);
    } finally {
      await admin.query(
        `drop trigger ${trigger} on ${SCHEMA}.checkpoints; drop function ${SCHEMA}.${trigger}()`,
      );
    }
    expect(await manager.loadEvents(runId)).toEqual([]);
    expect(await manager.loadRunMessages(runId)).toEqual([{ role: "user", content: "kept" }]);
    expect(await manager.listSessions()).not.toContain(sessionId);
  });

  it("stores text with a NUL character, which JSON.stringify writes as \\u0000", async () => {
    const [sessionId, runId] = [`nul-${randomUUID()}`, `nul-${randomUUID()}`];
    const text = "before\u0000after";
    const commit = {
      sessionId,
      runId,
      events: [new RuntimeEvent("tool.succeeded", { result: text }, 10, runId, sessionId, "agent", 1)],
      messages: { fromIndex: 0, items: [{ role: "tool", toolCallId: "c", toolName: "t", content: text }] },
      checkpoint: { checkpointId: "nul", state: { text }, transcriptLength: 1, artifactCount: 0 },
    } satisfies Parameters<PostgresSessionManager["commitCheckpoint"]>[0];
    await manager.commitCheckpoint(commit);
    await manager.setState(sessionId, { text });
    await manager.appendMessage(sessionId, { role: "user", content: text });
    expect((await manager.loadEvents(runId))[0]?.payload).toEqual({ result: text });
    expect(await manager.loadRunMessages(runId)).toEqual(commit.messages.items);
    expect((await manager.loadCheckpoint(sessionId, "nul"))?.state).toEqual({ text });
    expect(await manager.getState(sessionId)).toEqual({ text });
    expect(await manager.loadMessages(sessionId)).toEqual([{ role: "user", content: text }]);
  });

  it("stores one copy of a commit that two managers make at once", async () => {
    const [sessionId, runId] = [`twice-${randomUUID()}`, `twice-${randomUUID()}`];
    const [first, second] = await Promise.all([open(), open()]);
    try {
      const commit = {
        sessionId,
        runId,
        events: [1, 2].map(
          (sequence) => new RuntimeEvent("step.started", {}, 10, runId, sessionId, "a", sequence),
        ),
        messages: null,
        checkpoint: { checkpointId: "same", state: { step: 1 }, transcriptLength: 0, artifactCount: 0 },
      };
      // Each waits on the other's uncommitted rows; the one that finds them stored takes the upserts instead.
      for (let round = 0; round < 5; round++)
        await Promise.all([first.commitCheckpoint(commit), second.commitCheckpoint(commit)]);
      expect((await manager.loadEvents(runId)).map((event) => event.sequence)).toEqual([1, 2]);
      expect(await manager.listCheckpoints(sessionId)).toEqual(["same"]);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("redacts the password of URL and key-value connection strings", () => {
    expect(redactConnectionString("postgres://u:pw@h:5432/db")).toBe("postgres://u:***@h:5432/db");
    expect(redactConnectionString("host=h password='p w' user=u")).toBe("host=h password=*** user=u");
    expect(redactConnectionString("postgres://h/db")).toBe("postgres://h/db");
  });

  it("refuses rows with an unknown schema version with a typed error", async () => {
    const sessionId = `future-${randomUUID()}`;
    const runId = `future-run-${randomUUID()}`;
    await admin.query(
      `insert into ${SCHEMA}.sessions (session_id, state, schema_version) values ($1, '{"x":1}', 99)`,
      [sessionId],
    );
    await admin.query(
      `insert into ${SCHEMA}.run_events (run_id, sequence, body, schema_version) values ($1, 1, '{}', 99)`,
      [runId],
    );
    const refused = { code: "store.schema_version", hint: expect.stringMatching(/upgrade Keel/) };
    await expect(manager.getState(sessionId)).rejects.toMatchObject(refused);
    await expect(manager.session(sessionId, async () => "never")).rejects.toMatchObject(refused);
    await expect(manager.loadEvents(runId)).rejects.toMatchObject(refused);
    await admin.query(
      `insert into ${SCHEMA}.run_messages (run_id, idx, body, schema_version) values ($1, 0, '{}', 99)`,
      [runId],
    );
    await expect(manager.loadRunMessages(runId)).rejects.toMatchObject(refused);
  });

  it("reports an unreachable server as a retryable store.connection error without the password", async () => {
    const failure = PostgresSessionManager.open({
      connectionString: "postgres://keel:s3cret@127.0.0.1:1/test",
      schema: SCHEMA,
    });
    await expect(failure).rejects.toMatchObject({ code: "store.connection", retryable: true });
    const error = (await failure.catch((caught: unknown) => caught)) as Error & { hint: string };
    expect(error.hint).toContain("127.0.0.1:1");
    expect(`${error.message} ${error.hint}`).not.toContain("s3cret");
  });

  it("fails a query on a dead connection with store.connection, and refuses use after close", async () => {
    const store = new PostgresSessionManager({ connectionString: "postgres://127.0.0.1:1/test" });
    await expect(store.getState("any")).rejects.toMatchObject({ code: "store.connection", retryable: true });
    await store.close();
    await expect(store.getState("any")).rejects.toMatchObject({ code: "store.closed" });
  });

  it("registers type postgres, which builds a migrated manager from config", async () => {
    registerPostgresStore();
    const definition = getPlugin("session", "postgres");
    expect(definition?.requiresPackage).toBe("pg");
    const built = (await definition?.create(
      { connection_string: URL, schema: SCHEMA, pool_size: 2, lock_timeout_ms: 1000 },
      { baseDir: ".", load: async () => undefined as never },
    )) as PostgresSessionManager;
    try {
      const sessionId = `registered-${randomUUID()}`;
      await built.setState(sessionId, { ok: true });
      expect(await manager.getState(sessionId)).toEqual({ ok: true });
    } finally {
      await built.close();
    }
  });
});
