import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { RunRecord } from "../../contracts/run-types.js";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import { getPlugin } from "../../plugins/plugin-registry.js";
import { describeSessionManagerConformance } from "../../testing/session-manager-conformance.js";
import { decodeFileName, encodeFileName } from "./encode-file-name.js";
import { JsonlFileSessionManager } from "./jsonl-file-session-manager.js";
import { jsonlFileSessionManagerConfig, registerJsonlStore } from "./register-jsonl-store.js";

const root = mkdtempSync(join(tmpdir(), "keel-jsonl-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every store a test opens, closed after it: a store keeps append handles open until `close()`. */
const opened: JsonlFileSessionManager[] = [];
function openStore(
  options: ConstructorParameters<typeof JsonlFileSessionManager>[0],
): JsonlFileSessionManager {
  const store = new JsonlFileSessionManager(options);
  opened.push(store);
  return store;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

describeSessionManagerConformance("jsonl_file", () => new JsonlFileSessionManager({ rootDir: root }));

function freshRoot(): string {
  return mkdtempSync(join(root, "case-"));
}

function run(runId: string, sessionId: string, overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    runId,
    sessionId,
    agentId: "agent",
    status: "running",
    pendingToolCalls: [],
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
    lastSequence: 0,
    ...overrides,
  };
}

describe("JsonlFileSessionManager persistence", () => {
  it("shows a second instance on the same root everything the first wrote", async () => {
    const rootDir = freshRoot();
    const first = openStore({ rootDir, fsync: true });
    await first.session("s", async (scope) => {
      scope.state.count = 1;
      await first.appendMessages("s", [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ]);
    });
    await first.saveArtifact("s", { name: "a", kind: "file", payload: { x: 1 }, metadata: { size: 1 } });
    const checkpoint = await first.createCheckpoint("s", {
      checkpointId: "r1:step:1",
      state: { step: 1 },
      transcriptLength: 2,
      artifactCount: 1,
    });
    await first.saveRun(run("r1", "s"));
    await first.appendEvents("r1", [
      new RuntimeEvent("run.started", { resumed: false }, 1000, "r1", "s", "agent", 1),
      new RuntimeEvent("step.started", { step: 1 }, 1001, "r1", "s", "agent", 2),
    ]);
    await first.saveRun(run("r1", "s", { status: "done", stopReason: "completed", lastSequence: 2 }));
    await first.close();

    const second = openStore({ rootDir });
    expect(await second.getState("s")).toEqual({ count: 1 });
    expect(await second.loadMessages("s")).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    expect(await second.listArtifacts("s")).toEqual([
      { name: "a", kind: "file", payload: { x: 1 }, metadata: { size: 1 } },
    ]);
    expect(await second.loadCheckpoint("s", "r1:step:1")).toEqual(checkpoint);
    expect(await second.listSessions()).toEqual(["s"]);
    expect(await second.getRun("r1")).toMatchObject({
      status: "done",
      stopReason: "completed",
      lastSequence: 2,
    });
    expect(await second.listRuns({ status: "done" })).toHaveLength(1);
    const events = await second.loadEvents("r1", { afterSequence: 1 });
    expect(events).toHaveLength(1);
    expect(events[0]).toBeInstanceOf(RuntimeEvent);
    expect(events[0]).toMatchObject({
      kind: "step.started",
      payload: { step: 1 },
      sequence: 2,
      timestampMs: 1001,
    });
    await second.close();
  });

  it("sees another instance's writes after the session changed on disk", async () => {
    const rootDir = freshRoot();
    const a = openStore({ rootDir });
    const b = openStore({ rootDir });
    await a.setState("s", { v: 1 });
    expect(await b.getState("s")).toEqual({ v: 1 });
    await a.appendMessage("s", { role: "user", content: "later" });
    await a.session("s", async (scope) => {
      scope.state.v = 2;
    });
    await b.session("s", async (scope) => {
      expect(scope.state).toEqual({ v: 2 });
      scope.state.v = 3;
    });
    expect(await b.loadMessages("s")).toHaveLength(1);
    expect(await a.getState("s")).toEqual({ v: 3 });
    await a.saveRun(run("r", "s"));
    expect(await b.getRun("r")).toMatchObject({ status: "running" });
    await a.saveRun(run("r", "s", { status: "waiting" }));
    expect(await b.getRun("r")).toMatchObject({ status: "waiting" });
  });

  it("appends no state line for a scope that changed nothing", async () => {
    const rootDir = freshRoot();
    const manager = openStore({ rootDir });
    await manager.session("s", async (scope) => {
      scope.state.x = 1;
    });
    await manager.session("s", async () => {});
    const { readFileSync } = await import("node:fs");
    const lines = readFileSync(join(rootDir, "sessions", "s.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ schemaVersion: 1, type: "state", data: { x: 1 } });
  });

  it("keeps a session deleted inside its own scope deleted and removes its file", async () => {
    const rootDir = freshRoot();
    const manager = openStore({ rootDir });
    await manager.setState("s", { x: 0 });
    await manager.session("s", async (scope) => {
      scope.state.x = 1;
      await manager.deleteSession("s");
    });
    expect(await manager.listSessions()).toEqual([]);
    expect(readdirSync(join(rootDir, "sessions"))).toEqual([]);
    expect(readdirSync(join(rootDir, "locks"))).toEqual([]);
  });

  it("refuses a record bigger than max_line_bytes and writes nothing", async () => {
    const manager = openStore({ rootDir: freshRoot(), maxLineBytes: 200 });
    await expect(
      manager.appendMessages("s", [
        { role: "user", content: "short" },
        { role: "user", content: "x".repeat(300) },
      ]),
    ).rejects.toMatchObject({ code: "store.record_too_large" });
    expect(await manager.loadMessages("s")).toEqual([]);
  });

  it("stores ids that are not safe file names and lists them back", async () => {
    const manager = openStore({ rootDir: freshRoot() });
    const ids = ["../escape", ".hidden", "A/b\\c", "%41", "Ünïcode ✓", "", "a"];
    for (const id of ids) await manager.setState(id, { id });
    for (const id of ids) expect(await manager.getState(id)).toEqual({ id });
    expect((await manager.listSessions()).sort()).toEqual(ids.slice().sort());
    await manager.saveRun(run("run/1", "../escape"));
    expect((await manager.listRuns({ sessionId: "../escape" })).map((record) => record.runId)).toEqual([
      "run/1",
    ]);
  });
});

describe("encodeFileName", () => {
  it("keeps safe characters, escapes the rest and round-trips", () => {
    expect(encodeFileName("run-1_a")).toBe("run-1_a");
    expect(encodeFileName("..")).toBe("%2E%2E");
    expect(encodeFileName("Ab")).toBe("%41b");
    for (const id of ["a.b", "ä/ß", "x%y", "Z"]) expect(decodeFileName(encodeFileName(id))).toBe(id);
  });

  it("rejects names it could not have made and ids too long for a file name", () => {
    expect(decodeFileName("A")).toBeUndefined();
    expect(decodeFileName("%zz")).toBeUndefined();
    expect(() => encodeFileName("é".repeat(100))).toThrow(
      expect.objectContaining({ code: "store.invalid_id" }),
    );
  });
});

describe("registerJsonlStore", () => {
  it("registers jsonl_file with root_dir resolved against the config directory", async () => {
    registerJsonlStore();
    registerJsonlStore();
    const definition = getPlugin("session", "jsonl_file");
    const rootDir = freshRoot();
    const config = jsonlFileSessionManagerConfig().parse({ root_dir: "store" });
    expect(config).toEqual({ root_dir: "store", fsync: false, max_line_bytes: 16 * 1024 * 1024 });
    const created = await definition?.create(config, {
      baseDir: rootDir,
      load: async () => undefined as never,
    });
    expect(created).toBeInstanceOf(JsonlFileSessionManager);
    await (created as JsonlFileSessionManager).setState("s", { ok: true });
    expect(readdirSync(join(rootDir, "store", "sessions"))).toEqual(["s.jsonl"]);
    expect(() => jsonlFileSessionManagerConfig().parse({})).toThrow();
  });
});
