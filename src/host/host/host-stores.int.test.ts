import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { appendThreaded } from "../../../test/support/threaded-history.js";
import { resolveConnectionString } from "../../stores/postgres/resolve-connection-string.js";
import type { HostStores } from "./host-stores.js";
import { createInMemoryHostStores } from "./in-memory-host-stores.js";
import { createPostgresHostStores } from "./postgres-host-stores.js";

// Runs against the real server: an unreachable one fails these tests rather than skipping them.
const URL = resolveConnectionString();
const SCHEMA = `keel_host_test_${randomBytes(6).toString("hex")}`;
const admin = new pg.Pool({ connectionString: URL, max: 1 });
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
  await admin.query(`drop schema if exists ${SCHEMA} cascade`);
  await admin.end();
});

function describeHostStores(name: string, open: () => Promise<HostStores>) {
  describe(`host stores: ${name}`, () => {
    it("pages events and transcript items newest first with opaque cursors, and searches the transcript", async () => {
      const stores = await open();
      const conversation = `c-${randomBytes(4).toString("hex")}`;
      for (const [index, role] of ["user", "assistant", "user"].entries()) {
        await stores.events.append({
          event_id: `${conversation}-e${index}`,
          event_type: "message.received",
          source: "api",
          conversation_id: conversation,
          metadata: {},
        });
        await stores.transcript.append({
          event_id: `${conversation}-e${index}`,
          conversation_id: conversation,
          role,
          item_type: "message",
          content: `Message ${index} about Keels`,
          artifact_refs: [],
          metadata: {},
        });
      }
      const events = await stores.events.page({ conversationId: conversation, limit: 2 });
      expect(events.items.map((event) => event.event_id)).toEqual([
        `${conversation}-e2`,
        `${conversation}-e1`,
      ]);
      expect(events.hasMore).toBe(true);
      expect((await stores.events.get(`${conversation}-e0`))?.conversation_id).toBe(conversation);
      const latest = await stores.transcript.latestSeq(conversation);
      const back = await stores.transcript.page({
        conversationId: conversation,
        limit: 10,
        direction: "backward",
        beforeSeq: latest!,
      });
      expect(back.items.map((item) => item.content)).toEqual([
        "Message 1 about Keels",
        "Message 0 about Keels",
      ]);
      const forward = await stores.transcript.page({
        conversationId: conversation,
        limit: 1,
        direction: "forward",
        afterSeq: back.items[1]!.seq,
      });
      expect(forward.items.map((item) => item.role)).toEqual(["assistant"]);
      expect(forward.hasMore).toBe(true);
      const found = await stores.transcript.search({
        conversationId: conversation,
        text: "keels",
        topK: 5,
        roles: ["user"],
      });
      expect(found.map((item) => item.content)).toEqual(["Message 2 about Keels", "Message 0 about Keels"]);
    });

    it("reads one thread of a conversation, or the whole conversation", async () => {
      const stores = await open();
      const conversation = `c-${randomBytes(4).toString("hex")}`;
      await appendThreaded(stores, { conversation }, [
        ["t1", "one in t1"],
        ["t2", "one in t2"],
        [null, "in the channel"],
        ["t1", "two in t1"],
      ]);
      const page = await stores.transcript.page({
        conversationId: conversation,
        threadId: "t1",
        limit: 1,
        direction: "backward",
      });
      expect(page.items.map((item) => item.content)).toEqual(["two in t1"]);
      expect(page.hasMore).toBe(true);
      const whole = await stores.transcript.page({
        conversationId: conversation,
        limit: 10,
        direction: "forward",
      });
      expect(whole.items).toHaveLength(4);
      expect(await stores.transcript.latestSeq(conversation, "t2")).toBe(whole.items[1]!.seq);
      expect(await stores.transcript.latestSeq(conversation, "t9")).toBeNull();
      const found = await stores.transcript.search({
        conversationId: conversation,
        threadId: "t1",
        text: "one",
        topK: 5,
      });
      expect(found.map((item) => item.content)).toEqual(["one in t1"]);
      const events = await stores.events.page({ conversationId: conversation, threadId: "t2", limit: 10 });
      expect(events.items.map((event) => event.thread_id)).toEqual(["t2"]);
    });

    it("keeps state by scope key, artifacts with ranges, blobs by owner, and audit records", async () => {
      const stores = await open();
      const scope = `conversation:r:b:${randomBytes(4).toString("hex")}`;
      await stores.state.set(scope, "b.key", { nested: [1, "two"] });
      await stores.state.set(scope, "a.key", "text");
      await stores.state.set(scope, "a.key", "replaced");
      expect(await stores.state.get(scope, "a.key")).toBe("replaced");
      expect(await stores.state.list(scope, { prefix: "a.", limit: 10 })).toEqual({
        keys: ["a.key"],
        hasMore: false,
      });
      expect(await stores.state.snapshot(scope)).toEqual({
        "a.key": "replaced",
        "b.key": { nested: [1, "two"] },
      });
      expect(await stores.state.delete(scope, "a.key")).toBe(true);
      expect(await stores.state.delete(scope, "a.key")).toBe(false);
      const id = `artifact-${randomBytes(4).toString("hex")}`;
      await stores.artifacts.register(
        { artifact_id: id, artifact_type: "file", source: "runner", run_id: "run-1", metadata: {} },
        Buffer.from("0123456789"),
      );
      expect((await stores.artifacts.get(id))?.run_id).toBe("run-1");
      expect(Buffer.from((await stores.artifacts.read(id, { offset: 3, limit: 4 }))!).toString()).toBe(
        "3456",
      );
      const owner = `plugin:${randomBytes(4).toString("hex")}`;
      await stores.storage.set(owner, "k", Buffer.from("v"));
      expect(Buffer.from((await stores.storage.get(owner, "k"))!).toString()).toBe("v");
      expect(await stores.storage.keys(owner)).toEqual(["k"]);
      await stores.audit.record({
        at: 1,
        run_id: "run-1",
        runner_id: "r",
        action: "call_tool",
        resource: "lookup",
        scope: null,
        result: "ok",
      });
    });
  });
}

describeHostStores("in memory", async () => createInMemoryHostStores());
describeHostStores("postgres", async () => {
  const stores = await createPostgresHostStores({ connectionString: URL, schema: SCHEMA });
  closers.push(stores.close);
  return stores;
});

describe("postgres host stores", () => {
  it("migrate a version-1 schema to threads in place, keeping its rows", async () => {
    const schema = `${SCHEMA}_v1`;
    closers.push(async () => void (await admin.query(`drop schema if exists ${schema} cascade`)));
    // The version-1 tables as an earlier Keel made them, holding a thread's items only inside their records.
    await admin.query(`create schema ${schema}; set search_path to ${schema};
      create table host_schema (version integer not null); insert into host_schema values (1);
      create table host_events (seq bigserial primary key, event_id text not null, conversation_id text,
        event_type text not null, record jsonb not null, created_at bigint not null);
      create table host_transcript (seq bigserial primary key, conversation_id text not null,
        record jsonb not null, created_at bigint not null);
      insert into host_transcript (conversation_id, record, created_at) values
        ('c', '{"content": "old in t1", "thread_id": "t1", "role": "user", "conversation_id": "c"}', 1),
        ('c', '{"content": "old in the channel", "role": "user", "conversation_id": "c"}', 2);
      insert into host_events (event_id, conversation_id, event_type, record, created_at) values
        ('old', 'c', 'message.received', '{"event_id": "old", "thread_id": "t1"}', 1);
      set search_path to default;`);
    const stores = await createPostgresHostStores({ connectionString: URL, schema });
    closers.push(stores.close);
    expect((await admin.query(`select version from ${schema}.host_schema`)).rows).toEqual([{ version: 2 }]);
    const whole = await stores.transcript.page({ conversationId: "c", limit: 10, direction: "forward" });
    expect(whole.items.map((item) => item.content)).toEqual(["old in t1", "old in the channel"]);
    await appendThreaded(stores, { conversation: "c" }, [["t1", "new in t1"]]);
    const thread = await stores.transcript.page({
      conversationId: "c",
      threadId: "t1",
      limit: 10,
      direction: "forward",
    });
    expect(thread.items.map((item) => item.content)).toEqual(["old in t1", "new in t1"]);
    const events = await stores.events.page({ conversationId: "c", threadId: "t1", limit: 10 });
    expect(events.items.map((event) => event.event_id)).toEqual(["c-t0", "old"]);
    // Opening it again finds version 2 and changes nothing.
    const again = await createPostgresHostStores({ connectionString: URL, schema });
    closers.push(again.close);
    expect(
      (await again.transcript.page({ conversationId: "c", limit: 10, direction: "forward" })).items,
    ).toHaveLength(3);
  });

  it("persist audit records and refuse a schema of another version", async () => {
    const stores = await createPostgresHostStores({ connectionString: URL, schema: SCHEMA });
    closers.push(stores.close);
    await stores.audit.record({
      at: 2,
      run_id: null,
      runner_id: null,
      action: "(transport)",
      resource: null,
      scope: null,
      result: "invalid_argument",
    });
    const { rows } = await admin.query(`select entry from ${SCHEMA}.host_audit order by id`);
    expect(rows.map((row: { entry: { action: string } }) => row.entry.action)).toContain("(transport)");
    await admin.query(`update ${SCHEMA}.host_schema set version = 99`);
    await expect(createPostgresHostStores({ connectionString: URL, schema: SCHEMA })).rejects.toThrow(
      /version 99/,
    );
    await admin.query(`update ${SCHEMA}.host_schema set version = 2`);
  });
});
