import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import { JsonlFileSessionManager } from "./jsonl-file-session-manager.js";

// Frozen files written by hand for schemaVersion 1 and never regenerated: if a change to the store stops
// reading them, data users already have would stop loading too.
const fixtures = resolve(fileURLToPath(new URL(".", import.meta.url)), "../../../test/fixtures/jsonl");
const rootDir = mkdtempSync(join(tmpdir(), "keel-jsonl-fixtures-"));
afterAll(() => rmSync(rootDir, { recursive: true, force: true }));

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

mkdirSync(join(rootDir, "sessions"));
mkdirSync(join(rootDir, "runs"));
copyFileSync(join(fixtures, "session-v1.jsonl"), join(rootDir, "sessions", "fixture-session.jsonl"));
copyFileSync(join(fixtures, "run-v1.jsonl"), join(rootDir, "runs", "run-1.jsonl"));

describe("jsonl_file frozen fixtures (schemaVersion 1)", () => {
  const manager = openStore({ rootDir });

  it("loads the session: newest state, messages, artifact and checkpoint", async () => {
    expect(await manager.listSessions()).toEqual(["fixture-session"]);
    expect(await manager.getState("fixture-session")).toEqual({ visits: 2, lastAnswer: "42" });
    expect(await manager.loadMessages("fixture-session")).toEqual([
      { role: "user", content: "Add 2 and 40" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call-1", name: "add", arguments: { a: 2, b: 40 } }],
      },
      { role: "tool", toolCallId: "call-1", toolName: "add", content: "42" },
      { role: "assistant", content: "2 + 40 = 42" },
    ]);
    expect(await manager.listArtifacts("fixture-session")).toEqual([
      { name: "sum.txt", kind: "file", payload: "42", metadata: { size: 2 } },
    ]);
    expect(await manager.listCheckpoints("fixture-session")).toEqual(["run-1:step:1"]);
    expect(await manager.loadCheckpoint("fixture-session", "run-1:step:1")).toEqual({
      schemaVersion: 1,
      checkpointId: "run-1:step:1",
      state: { transcript: [{ role: "user", content: "Add 2 and 40" }], status: "running", lastSequence: 4 },
      transcriptLength: 3,
      artifactCount: 1,
      createdAt: "2026-01-02T10:00:03.500Z",
    });
  });

  it("loads the run: the newest record and every event", async () => {
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
    expect((await manager.loadEvents("run-1", { afterSequence: 3 })).map((entry) => entry.kind)).toEqual([
      "run.finished",
    ]);
  });

  it("left the fixture files untouched", () => {
    for (const [name, copy] of [
      ["session-v1.jsonl", join(rootDir, "sessions", "fixture-session.jsonl")],
      ["run-v1.jsonl", join(rootDir, "runs", "run-1.jsonl")],
    ] as const) {
      expect(readFileSync(copy).equals(readFileSync(join(fixtures, name)))).toBe(true);
    }
  });
});

// A durable run's own transcript as `messages` lines: each cuts the transcript to its `fromIndex` and appends;
// the last one rewrites the tail a crash left behind (two messages replaced by one).
const transcriptRoot = join(rootDir, "run-messages");
mkdirSync(join(transcriptRoot, "runs"), { recursive: true });
copyFileSync(join(fixtures, "run-messages-v1.jsonl"), join(transcriptRoot, "runs", "run-2.jsonl"));

describe("jsonl_file frozen fixture with a run transcript (schemaVersion 1)", () => {
  const manager = openStore({ rootDir: transcriptRoot });
  const transcript = [
    { role: "system", content: "You are a calculator." },
    { role: "user", content: "Multiply 6 by 7" },
    {
      role: "assistant",
      content: "",
      toolCalls: [{ id: "call-1", name: "multiply", arguments: { a: 6, b: 7 } }],
    },
    { role: "tool", toolCallId: "call-1", toolName: "multiply", content: "42" },
    { role: "assistant", content: "6 × 7 = 42" },
  ];

  it("replays the messages lines in order, the last one replacing the tail", async () => {
    expect(await manager.loadRunMessages("run-2")).toEqual(transcript);
    expect(await manager.loadRunMessages("run-2", { length: 4 })).toEqual(transcript.slice(0, 4));
    expect(await manager.loadRunMessages("run-2", { length: 2 })).toEqual(transcript.slice(0, 2));
  });

  it("loads the run's newest record and its events beside the transcript", async () => {
    expect(await manager.getRun("run-2")).toEqual({
      runId: "run-2",
      agentId: "calculator",
      sessionId: "durable-session",
      status: "done",
      stopReason: "completed",
      pendingToolCalls: [],
      createdAt: "2026-01-03T09:00:00.000Z",
      updatedAt: "2026-01-03T09:00:12.000Z",
      lastSequence: 7,
    });
    const events = await manager.loadEvents("run-2");
    expect(events.every((entry) => entry instanceof RuntimeEvent)).toBe(true);
    expect(events.map((entry) => [entry.sequence, entry.kind, entry.payload])).toEqual([
      [1, "run.started", { resumed: false }],
      [2, "step.started", { step: 1 }],
      [3, "step.finished", { step: 1 }],
      [4, "step.started", { step: 2 }],
      [5, "run.started", { resumed: true }],
      [6, "step.finished", { step: 2 }],
      [7, "run.finished", { result: { stopReason: "completed" } }],
    ]);
    expect(events[6]?.toJSON()).toMatchObject({ runId: "run-2", sessionId: "durable-session" });
  });

  it("left the fixture file untouched", () => {
    const copy = join(transcriptRoot, "runs", "run-2.jsonl");
    expect(readFileSync(copy).equals(readFileSync(join(fixtures, "run-messages-v1.jsonl")))).toBe(true);
  });

  it("goes on writing after the fixture's lines (in a copy)", async () => {
    const writable = join(rootDir, "run-messages-writable");
    mkdirSync(join(writable, "runs"), { recursive: true });
    copyFileSync(join(fixtures, "run-messages-v1.jsonl"), join(writable, "runs", "run-2.jsonl"));
    const writer = openStore({ rootDir: writable });
    await expect(writer.saveRunMessages("run-2", 6, [])).rejects.toMatchObject({
      code: "store.transcript_gap",
    });
    await writer.saveRunMessages("run-2", 4, [{ role: "assistant", content: "42" }]);
    const reopened = openStore({ rootDir: writable });
    expect(await reopened.loadRunMessages("run-2")).toEqual([
      ...transcript.slice(0, 4),
      { role: "assistant", content: "42" },
    ]);
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
