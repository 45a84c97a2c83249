import { execFile, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileForChildren } from "../../../test/support/compile-for-children.js";
import { isProcessAlive } from "./acquire-file-lock.js";
import { encodeFileName } from "./encode-file-name.js";
import { JsonlFileSessionManager } from "./jsonl-file-session-manager.js";

const run = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), "keel-jsonl-xproc-"));
const script = join(root, "increment.mjs");
afterAll(() => rmSync(root, { recursive: true, force: true }));

beforeAll(() => {
  const entry = join(compileForChildren(root), "stores/jsonl/jsonl-file-session-manager.js");
  writeFileSync(
    script,
    `import { JsonlFileSessionManager } from ${JSON.stringify(entry)};
const [rootDir, sessionId, count] = process.argv.slice(2);
const manager = new JsonlFileSessionManager({ rootDir });
for (let index = 0; index < Number(count); index++) {
  await manager.session(sessionId, async (scope) => {
    const seen = scope.state.counter ?? 0;
    // Widen the read-modify-write window so a missing lock would lose updates.
    await new Promise((done) => setTimeout(done, Math.random() * 2));
    scope.state.counter = seen + 1;
    scope.state[process.pid] = (scope.state[process.pid] ?? 0) + 1;
  });
}
await manager.appendMessage(sessionId, { role: "user", content: String(process.pid) });
await manager.close();
`,
  );
}, 120_000);

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  expect(isProcessAlive(child.pid as number)).toBe(false);
  return child.pid as number;
}

describe("JsonlFileSessionManager across processes", () => {
  it("serialises session() scopes of two processes: 2 × 50 increments make 100", async () => {
    const rootDir = join(root, "counter");
    const sessionId = "Shared Session";
    const children = [0, 1].map(() => run(process.execPath, [script, rootDir, sessionId, "50"]));
    await Promise.all(children);
    const manager = new JsonlFileSessionManager({ rootDir });
    const state = await manager.getState(sessionId);
    expect(state.counter).toBe(100);
    expect(Object.values(state).filter((value) => value === 50)).toHaveLength(2);
    expect(await manager.loadMessages(sessionId)).toHaveLength(2);
    expect(readdirSync(join(rootDir, "locks"))).toEqual([]);
  }, 60_000);

  it("takes over a lock file left by a dead process", async () => {
    const rootDir = join(root, "stale");
    mkdirSync(join(rootDir, "locks"), { recursive: true });
    const lockPath = join(rootDir, "locks", `${encodeFileName("s")}.lock`);
    writeFileSync(lockPath, `${deadPid()}\nleft-behind\n`);
    const manager = new JsonlFileSessionManager({ rootDir });
    const started = Date.now();
    await manager.session("s", async (scope) => {
      scope.state.ok = true;
    });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await manager.getState("s")).toEqual({ ok: true });
    expect(readdirSync(join(rootDir, "locks"))).toEqual([]);
  });

  it("waits for a lock file held by a live process and proceeds once it is gone", async () => {
    const rootDir = join(root, "live");
    mkdirSync(join(rootDir, "locks"), { recursive: true });
    const lockPath = join(rootDir, "locks", `${encodeFileName("s")}.lock`);
    writeFileSync(lockPath, `${process.pid}\nsomeone-else\n`);
    const manager = new JsonlFileSessionManager({ rootDir });
    let entered = false;
    const scope = manager.session("s", async () => {
      entered = true;
    });
    // Another session's lock is another file: it is not held up.
    await manager.appendMessage("other", { role: "user", content: "x" });
    await new Promise((done) => setTimeout(done, 100));
    expect(entered).toBe(false);
    rmSync(lockPath);
    await scope;
    expect(entered).toBe(true);
  });

  it("gives up waiting for another process's lock when the scope's signal aborts", async () => {
    const rootDir = join(root, "abort");
    mkdirSync(join(rootDir, "locks"), { recursive: true });
    const lockPath = join(rootDir, "locks", `${encodeFileName("s")}.lock`);
    writeFileSync(lockPath, `${process.pid}\nsomeone-else\n`);
    const manager = new JsonlFileSessionManager({ rootDir });
    const controller = new AbortController();
    const waiting = manager.session("s", async () => "entered", { signal: controller.signal });
    const reason = new Error("gave up");
    setTimeout(() => controller.abort(reason), 20);
    await expect(waiting).rejects.toBe(reason);
    rmSync(lockPath);
    expect(await manager.session("s", async () => "free")).toBe("free");
  });
});
