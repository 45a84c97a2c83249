import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Message } from "../../contracts/message.js";
import { type Logger, setLogger } from "../../logging/logger.js";
import { JsonlFileSessionManager } from "./jsonl-file-session-manager.js";

const root = mkdtempSync(join(tmpdir(), "keel-jsonl-recovery-"));
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

let restoreLogger: Logger | undefined;
afterEach(() => {
  if (restoreLogger !== undefined) setLogger(restoreLogger);
  restoreLogger = undefined;
});

function captureWarnings(): string[] {
  const warnings: string[] = [];
  const record = (message: string, details?: Record<string, unknown>) =>
    warnings.push(`${message} ${JSON.stringify(details ?? {})}`);
  restoreLogger = setLogger({ debug: () => {}, info: () => {}, warn: record, error: () => {} });
  return warnings;
}

const line = (type: string, data: unknown, schemaVersion = 1) =>
  `${JSON.stringify({ schemaVersion, type, data, ts: "2026-01-01T00:00:00.000Z" })}\n`;

/** A root holding one session file with the given content. */
function sessionFile(content: string): { rootDir: string; path: string } {
  const rootDir = mkdtempSync(join(root, "case-"));
  mkdirSync(join(rootDir, "sessions"));
  const path = join(rootDir, "sessions", "s.jsonl");
  writeFileSync(path, content);
  return { rootDir, path };
}

const valid = line("state", { n: 1 }) + line("message", { role: "user", content: "one" });

describe("torn last line", () => {
  it.each([
    ["half a JSON line without a newline", '{"schemaVersion":1,"type":"mess'],
    ["a complete record without its newline", line("message", { role: "user", content: "x" }).trimEnd()],
    ["an invalid JSON last line with a newline", "{garbage\n"],
  ])("loads what precedes %s, warns, and appends cleanly after it", async (_label, torn) => {
    const { rootDir, path } = sessionFile(valid);
    appendFileSync(path, torn);
    const warnings = captureWarnings();
    const manager = openStore({ rootDir });
    expect(await manager.getState("s")).toEqual({ n: 1 });
    expect(await manager.loadMessages("s")).toEqual([{ role: "user", content: "one" }]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(path);
    expect(warnings[0]).toContain('"line":3');

    await manager.appendMessages("s", [
      { role: "assistant", content: "two" },
      { role: "user", content: "three" },
    ]);
    const text = readFileSync(path, "utf8");
    expect(text.startsWith(valid)).toBe(true);
    expect(text.endsWith("\n")).toBe(true);
    for (const stored of text.trimEnd().split("\n")) expect(() => JSON.parse(stored)).not.toThrow();

    const third = openStore({ rootDir });
    expect((await third.loadMessages("s")).map((message) => message.content)).toEqual([
      "one",
      "two",
      "three",
    ]);
    expect(warnings).toHaveLength(1);
  });

  it("treats a torn run file the same way", async () => {
    const rootDir = mkdtempSync(join(root, "case-"));
    mkdirSync(join(rootDir, "runs"));
    const path = join(rootDir, "runs", "r.jsonl");
    const record = { runId: "r", sessionId: "s", agentId: "a", status: "running", pendingToolCalls: [] };
    writeFileSync(path, `${line("record", record)}{"schemaVersion":1,"type":"ev`);
    const warnings = captureWarnings();
    const manager = openStore({ rootDir });
    expect(await manager.getRun("r")).toMatchObject({ status: "running" });
    expect(warnings).toHaveLength(1);
    await manager.saveRun({ ...(await manager.getRun("r"))!, status: "done" } as never);
    expect(await openStore({ rootDir }).getRun("r")).toMatchObject({ status: "done" });
  });
});

describe("torn last messages line of a run", () => {
  const record = { runId: "r", sessionId: "s", agentId: "a", status: "running", pendingToolCalls: [] };
  const say = (content: string): Message => ({ role: "user", content });
  const stored = `${line("record", record)}${line("messages", { fromIndex: 0, messages: [say("a"), say("b")] })}`;

  it.each([
    ["half a messages line", '{"schemaVersion":1,"type":"messages","data":{"fromIndex":2,"messa'],
    [
      "a complete messages line without its newline",
      line("messages", { fromIndex: 1, messages: [say("torn")] }).trimEnd(),
    ],
  ])("ignores %s, reports it, and appends cleanly after it", async (_label, torn) => {
    const rootDir = mkdtempSync(join(root, "case-"));
    mkdirSync(join(rootDir, "runs"));
    const path = join(rootDir, "runs", "r.jsonl");
    writeFileSync(path, stored + torn);
    const warnings = captureWarnings();
    const manager = openStore({ rootDir });
    expect(await manager.loadRunMessages("r")).toEqual([say("a"), say("b")]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(path);
    expect(warnings[0]).toContain('"line":3');

    // The index is checked against what survived, and the torn tail is cut off before the append.
    await expect(manager.saveRunMessages("r", 3, [say("x")])).rejects.toMatchObject({
      code: "store.transcript_gap",
    });
    await manager.saveRunMessages("r", 2, [say("c")]);
    const text = readFileSync(path, "utf8");
    expect(text.startsWith(stored)).toBe(true);
    expect(text.trimEnd().split("\n")).toHaveLength(3);
    for (const stored of text.trimEnd().split("\n")) expect(() => JSON.parse(stored)).not.toThrow();
    const reopened = openStore({ rootDir });
    expect(await reopened.loadRunMessages("r")).toEqual([say("a"), say("b"), say("c")]);
    expect(await reopened.getRun("r")).toMatchObject({ status: "running" });
    expect(warnings).toHaveLength(1);
  });

  it.each([
    ["a gap", { fromIndex: 3, messages: [say("x")] }],
    ["a negative index", { fromIndex: -1, messages: [] }],
    ["messages that are not an array", { fromIndex: 0, messages: say("x") }],
    ["a message without a role", { fromIndex: 0, messages: [{ content: "x" }] }],
  ])("refuses a whole messages line with %s as store.corrupt", async (_label, data) => {
    const rootDir = mkdtempSync(join(root, "case-"));
    mkdirSync(join(rootDir, "runs"));
    const path = join(rootDir, "runs", "r.jsonl");
    writeFileSync(path, stored + line("messages", data));
    const before = readFileSync(path);
    const manager = openStore({ rootDir });
    const refused = { code: "store.corrupt", hint: expect.stringContaining("line 3") };
    await expect(manager.loadRunMessages("r")).rejects.toMatchObject(refused);
    await expect(manager.saveRunMessages("r", 0, [say("y")])).rejects.toMatchObject(refused);
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});

describe("refused files", () => {
  async function expectRefused(content: string, code: string, lineNumber: number) {
    const { rootDir, path } = sessionFile(content);
    const before = readFileSync(path);
    const manager = openStore({ rootDir });
    const failure = await manager.loadMessages("s").then(
      () => undefined,
      (error: unknown) => error as { code: string; hint: string; message: string },
    );
    expect(failure).toMatchObject({ code });
    expect(failure?.hint).toContain(path);
    expect(failure?.hint).toContain(`line ${lineNumber}`);
    // Writes and scopes are refused too, and the file is left exactly as it was.
    await expect(manager.appendMessage("s", { role: "user", content: "more" })).rejects.toMatchObject({
      code,
    });
    await expect(manager.session("s", async () => "entered")).rejects.toMatchObject({ code });
    expect(readFileSync(path).equals(before)).toBe(true);
    // Deleting the session is still possible: it is how a user gives up on a damaged session.
    await manager.deleteSession("s");
    expect(await manager.listSessions()).toEqual([]);
  }

  it("refuses an invalid line in the middle with store.corrupt", async () => {
    await expectRefused(
      `${line("state", { n: 1 })}{not json\n${line("message", { role: "user" })}`,
      "store.corrupt",
      2,
    );
  });

  it("refuses a valid-JSON line that is not a record, mid-file or last", async () => {
    await expectRefused(`${line("state", {})}[1,2]\n${line("state", {})}`, "store.corrupt", 2);
    await expectRefused(`${line("state", {})}${line("mystery", {})}`, "store.corrupt", 2);
    await expectRefused(`${line("message", "not an object")}`, "store.corrupt", 1);
  });

  it("refuses a record with an unknown schemaVersion with store.schema_version", async () => {
    await expectRefused(
      `${line("state", { n: 1 })}${line("message", { role: "user" }, 2)}`,
      "store.schema_version",
      2,
    );
  });

  it("refuses a mid-file line longer than max_line_bytes", async () => {
    const { rootDir } = sessionFile(`${line("message", { role: "user", content: "x".repeat(500) })}${valid}`);
    const manager = openStore({ rootDir, maxLineBytes: 300 });
    await expect(manager.getState("s")).rejects.toMatchObject({ code: "store.corrupt" });
  });
});
