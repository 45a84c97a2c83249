import { copyFileSync, mkdtempSync, renameSync, rmSync, statSync, utimesSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import { AppendHandles } from "./append-handles.js";
import { encodeFileName } from "./encode-file-name.js";
import { JsonlFileSessionManager } from "./jsonl-file-session-manager.js";

const root = mkdtempSync(join(tmpdir(), "keel-jsonl-handles-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const freshRoot = (): string => mkdtempSync(join(root, "case-"));
const runFile = (rootDir: string, runId: string): string =>
  join(rootDir, "runs", `${encodeFileName(runId)}.jsonl`);
const event = (runId: string, sequence: number): RuntimeEvent =>
  new RuntimeEvent("step.started", { step: sequence }, 1000 + sequence, runId, "s", "agent", sequence);
const sequences = async (rootDir: string, runId: string): Promise<number[]> => {
  const reader = new JsonlFileSessionManager({ rootDir });
  try {
    return (await reader.loadEvents(runId)).map((entry) => entry.sequence);
  } finally {
    await reader.close();
  }
};
/** The manager's kept handles, which the store does not expose. */
const keptHandles = (manager: JsonlFileSessionManager): AppendHandles =>
  (manager as unknown as { handles: AppendHandles }).handles;

describe("AppendHandles", () => {
  it("hands back a kept handle only for the inode it was opened on", async () => {
    const dir = freshRoot();
    const path = join(dir, "a.jsonl");
    const handles = new AppendHandles(4);
    const first = await handles.take(path, 0);
    await first.appendFile("one\n");
    const { ino } = await first.stat();
    await handles.keep(path, first, ino);
    const again = await handles.take(path, ino);
    expect(again).toBe(first);
    await handles.keep(path, again, ino);
    // Another inode: the kept handle is closed, not written through.
    const other = await handles.take(path, ino + 1);
    expect(other).not.toBe(first);
    expect(first.fd).toBe(-1);
    await other.appendFile("two\n");
    await other.close();
    expect(await readFile(path, "utf8")).toBe("one\ntwo\n");
    expect(handles.size).toBe(0);
  });

  it("closes the least recently used handle past its bound, and all of them on closeAll", async () => {
    const dir = freshRoot();
    const handles = new AppendHandles(2);
    const opened = [];
    for (const name of ["a", "b", "c"]) {
      const path = join(dir, name);
      const handle = await handles.take(path, 0);
      opened.push(handle);
      await handles.keep(path, handle, (await handle.stat()).ino);
    }
    expect(handles.size).toBe(2);
    expect(opened.map((handle) => handle.fd === -1)).toEqual([true, false, false]);
    await handles.closeAll();
    expect(handles.size).toBe(0);
    expect(opened.every((handle) => handle.fd === -1)).toBe(true);
  });
});

describe("JsonlFileSessionManager with kept handles", () => {
  it("keeps a run's file open between appends, and the lines land in order", async () => {
    const rootDir = freshRoot();
    const manager = new JsonlFileSessionManager({ rootDir });
    await manager.appendEvents("r", [event("r", 1)]);
    expect(keptHandles(manager).size).toBe(1);
    await manager.appendEvents("r", [event("r", 2), event("r", 3)]);
    await manager.saveRunMessages("r", 0, [{ role: "user", content: "hi" }]);
    expect(keptHandles(manager).size).toBe(1);
    expect(await sequences(rootDir, "r")).toEqual([1, 2, 3]);
    await manager.close();
    expect(keptHandles(manager).size).toBe(0);
  });

  it("writes after another writer's lines when that writer appended to the run's file meanwhile", async () => {
    const rootDir = freshRoot();
    const [mine, other] = [
      new JsonlFileSessionManager({ rootDir }),
      new JsonlFileSessionManager({ rootDir }),
    ];
    await mine.appendEvents("r", [event("r", 1), event("r", 2)]);
    await other.appendEvents("r", [event("r", 3)]);
    await mine.appendEvents("r", [event("r", 3), event("r", 4)]);
    expect(await sequences(rootDir, "r")).toEqual([1, 2, 3, 4]);
    expect((await mine.loadEvents("r")).map((entry) => entry.sequence)).toEqual([1, 2, 3, 4]);
    await Promise.all([mine.close(), other.close()]);
  });

  it("does not write through a kept handle to a run file that was deleted", async () => {
    const rootDir = freshRoot();
    const manager = new JsonlFileSessionManager({ rootDir });
    await manager.appendEvents("r", [event("r", 1)]);
    rmSync(runFile(rootDir, "r"));
    await manager.appendEvents("r", [event("r", 2)]);
    // The old file is gone with event 1; event 2 starts a new one rather than vanishing with the old inode.
    expect(await sequences(rootDir, "r")).toEqual([2]);
    await manager.close();
  });

  it("does not write through a kept handle to a run file replaced by another of the same size and time", async () => {
    const rootDir = freshRoot();
    const manager = new JsonlFileSessionManager({ rootDir });
    await manager.appendEvents("r", [event("r", 1)]);
    const path = runFile(rootDir, "r");
    // Whole seconds, which every mtime representation holds exactly; a read makes the manager's mark take it.
    const time = Math.floor(Date.now() / 1000) - 60;
    utimesSync(path, time, time);
    expect(await manager.loadEvents("r")).toHaveLength(1);
    // A copy renamed over the file: the same bytes, size and mtime, another inode.
    const before = statSync(path);
    copyFileSync(path, `${path}.copy`);
    utimesSync(`${path}.copy`, time, time);
    renameSync(`${path}.copy`, path);
    const after = statSync(path);
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
    expect(after.ino).not.toBe(before.ino);
    await manager.appendEvents("r", [event("r", 2)]);
    expect(await sequences(rootDir, "r")).toEqual([1, 2]);
    await manager.close();
  });

  it("keeps a session's file open while it holds the session, and closes it when it lets go", async () => {
    const rootDir = freshRoot();
    const manager = new JsonlFileSessionManager({ rootDir });
    const checkpoint = (checkpointId: string) => ({
      checkpointId,
      state: {},
      transcriptLength: 0,
      artifactCount: 0,
    });
    await manager.session("s", async () => {
      await manager.createCheckpoint("s", checkpoint("a"));
      expect(keptHandles(manager).size).toBe(1);
      await manager.createCheckpoint("s", checkpoint("b"));
      // Deleted inside its own scope: the handle goes with the file, and the next write makes a new one.
      await manager.deleteSession("s");
      expect(keptHandles(manager).size).toBe(0);
      await manager.createCheckpoint("s", checkpoint("c"));
    });
    expect(keptHandles(manager).size).toBe(0);
    // Outside a scope a write takes the lock for itself, and the handle does not outlive it.
    await manager.createCheckpoint("s", checkpoint("d"));
    expect(keptHandles(manager).size).toBe(0);
    const reader = new JsonlFileSessionManager({ rootDir });
    expect(await reader.listCheckpoints("s")).toEqual(["c", "d"]);
    await Promise.all([manager.close(), reader.close()]);
  });

  it("keeps at most 64 handles however many runs it writes", async () => {
    const rootDir = freshRoot();
    const manager = new JsonlFileSessionManager({ rootDir });
    const runIds = Array.from({ length: 70 }, (_, index) => `r${index}`);
    for (const runId of runIds) await manager.appendEvents(runId, [event(runId, 1)]);
    expect(keptHandles(manager).size).toBe(64);
    // The first runs' handles were closed; writing to them again opens them anew.
    for (const runId of runIds) await manager.appendEvents(runId, [event(runId, 2)]);
    expect(keptHandles(manager).size).toBe(64);
    for (const runId of [runIds[0] as string, runIds[69] as string]) {
      expect(await sequences(rootDir, runId)).toEqual([1, 2]);
    }
    await manager.close();
  });
});
