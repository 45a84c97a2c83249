import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerEventBusBuiltins } from "../builtins/builtin-event-buses.js";
import { RuntimeEvent } from "../contracts/runtime-event.js";
import { type Logger, setLogger } from "../logging/logger.js";
import { getPlugin } from "../plugins/plugin-registry.js";
import { AsyncEventBus } from "./async-event-bus.js";
import { FileLoggingEventBus, type FileLoggingEventBusOptions } from "./file-logging-event-bus.js";

let directory: string;
let errors: { message: string; details: Record<string, unknown> | undefined }[];
let previous: Logger;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "keel-file-logging-"));
  errors = [];
  const ignore = (): void => {};
  previous = setLogger({
    debug: ignore,
    info: ignore,
    warn: ignore,
    error: (message, details) => void errors.push({ message, details }),
  });
});

afterEach(async () => {
  setLogger(previous);
  await rm(directory, { recursive: true, force: true });
});

function createBus(options: Partial<FileLoggingEventBusOptions> = {}): FileLoggingEventBus {
  return new FileLoggingEventBus({
    inner: new AsyncEventBus(),
    logPath: join(directory, "events.jsonl"),
    ...options,
  });
}

async function readLines(path = join(directory, "events.jsonl")): Promise<Record<string, unknown>[]> {
  const text = await readFile(path, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("FileLoggingEventBus", () => {
  it("forwards to the inner bus first, then appends one ordered JSON line per event", async () => {
    const bus = createBus({ logPath: join(directory, "nested", "dir", "events.jsonl") });
    const seen: string[] = [];
    bus.subscribe("*", (event) => void seen.push(event.kind));
    bus.publish(
      new RuntimeEvent("step.started", { step: 1 }, Date.UTC(2025, 0, 2), "run-1", "s-1", "agent-1", 1),
    );
    for (let step = 2; step <= 50; step++) bus.emit("custom", { step });
    expect(seen).toHaveLength(50);
    expect(bus.getHistory()).toHaveLength(50);
    await bus.flush();
    const lines = await readLines(join(directory, "nested", "dir", "events.jsonl"));
    expect(lines).toHaveLength(50);
    expect(lines[0]).toEqual({
      kind: "step.started",
      runId: "run-1",
      sessionId: "s-1",
      agentId: "agent-1",
      sequence: 1,
      timestamp: "2025-01-02T00:00:00.000Z",
      payload: { step: 1 },
    });
    expect(lines.slice(1).map((line) => (line.payload as { step: number }).step)).toEqual(
      Array.from({ length: 49 }, (_, index) => index + 2),
    );
    bus.emit("later", {});
    await bus.close();
    expect(await readLines(join(directory, "nested", "dir", "events.jsonl"))).toHaveLength(51);
  });

  it("serialises at publish time, so later payload changes are not logged", async () => {
    const bus = createBus();
    const usage = { totalTokens: 1 };
    bus.emit("usage.updated", { usage });
    usage.totalTokens = 99;
    await bus.flush();
    expect((await readLines())[0]?.payload).toEqual({ usage: { totalTokens: 1 } });
  });

  it("redacts configured keys at any depth, ignoring case and separators", async () => {
    const bus = createBus();
    bus.emit("tool.started", {
      toolCallId: "c",
      toolId: "http",
      params: {
        headers: { Authorization: "Bearer x", accept: "json" },
        apiKey: "k",
        list: [{ password: "p" }],
      },
      token: { nested: "object" },
    });
    await bus.flush();
    expect((await readLines())[0]?.payload).toEqual({
      toolCallId: "c",
      toolId: "http",
      params: {
        headers: { Authorization: "[redacted]", accept: "json" },
        apiKey: "[redacted]",
        list: [{ password: "[redacted]" }],
      },
      token: "[redacted]",
    });
  });

  it("uses only the given redact keys when configured", async () => {
    const bus = createBus({ redactKeys: ["internal_note"] });
    bus.emit("x", { password: "shown", internalNote: "hidden" });
    await bus.flush();
    expect((await readLines())[0]?.payload).toEqual({ password: "shown", internalNote: "[redacted]" });
  });

  it("truncates long strings with a marker", async () => {
    const bus = createBus({ maxValueLength: 5 });
    bus.emit("llm.delta", { text: "abcdefghij", short: "abc", nested: ["0123456789"] });
    await bus.flush();
    expect((await readLines())[0]?.payload).toEqual({
      text: "abcde…[truncated 5 chars]",
      short: "abc",
      nested: ["01234…[truncated 5 chars]"],
    });
  });

  it("logs only names matching include globs and not matching exclude globs", async () => {
    const bus = createBus({
      includeEvents: ["tool.*", "run.finished"],
      excludeEvents: ["tool.delta", "tool.mcp.*"],
    });
    for (const kind of [
      "tool.started",
      "tool.delta",
      "tool.mcp.call",
      "run.finished",
      "run.started",
      "llm.delta",
    ]) {
      bus.emit(kind, {});
    }
    bus.emit("tool.started", {});
    await bus.flush();
    expect((await readLines()).map((line) => line.kind)).toEqual([
      "tool.started",
      "run.finished",
      "tool.started",
    ]);
    expect(bus.getHistory()).toHaveLength(7);
  });

  it("treats glob metacharacters other than * and ? literally", async () => {
    const bus = createBus({ includeEvents: ["run.?tarted", "a+b"] });
    for (const kind of ["run.started", "runXstarted", "a+b", "aab"]) bus.emit(kind, {});
    await bus.flush();
    expect((await readLines()).map((line) => line.kind)).toEqual(["run.started", "a+b"]);
  });

  it("writes nothing for an empty include list", async () => {
    const bus = createBus({ includeEvents: [] });
    bus.emit("x", {});
    await bus.flush();
    await expect(readFile(join(directory, "events.jsonl"), "utf8")).rejects.toThrow();
  });

  it("logs and swallows IO errors, and keeps forwarding events", async () => {
    const blocker = join(directory, "file");
    await writeFile(blocker, "not a directory");
    const bus = createBus({ logPath: join(blocker, "events.jsonl") });
    const seen: string[] = [];
    bus.subscribe("*", (event) => void seen.push(event.kind));
    expect(() => bus.emit("x", {})).not.toThrow();
    await bus.flush();
    bus.emit("y", {});
    await bus.flush();
    expect(seen).toEqual(["x", "y"]);
    expect(errors).toHaveLength(2);
    expect(errors[0]?.message).toContain("could not write 1 event line");
  });

  it("logs and skips an event whose payload cannot be serialised", async () => {
    const bus = createBus();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    bus.emit("bad", { circular });
    bus.emit("good", {});
    await bus.flush();
    expect((await readLines()).map((line) => line.kind)).toEqual(["good"]);
    expect(errors[0]?.message).toContain('"bad"');
  });

  it("clears the inner history and closes the inner bus", async () => {
    const inner = new AsyncEventBus();
    const bus = createBus({ inner });
    let calls = 0;
    bus.subscribe("x", () => void calls++);
    bus.emit("x", {});
    bus.clearHistory();
    expect(inner.getHistory()).toEqual([]);
    await bus.close();
    inner.emit("x", {});
    expect(calls).toBe(1);
  });

  it("registers as the file_logging builtin, loading its inner bus and resolving log_path", async () => {
    registerEventBusBuiltins();
    const loaded: unknown[] = [];
    const definition = getPlugin("event_bus", "file_logging");
    const bus = (await definition?.create(
      { log_path: "logs/events.jsonl", redact_keys: ["secret"], max_value_length: 3 },
      {
        baseDir: directory,
        load: async <T>(_kind: string, ref: unknown): Promise<T> => {
          loaded.push(ref);
          return new AsyncEventBus() as T;
        },
      },
    )) as FileLoggingEventBus;
    expect(loaded).toEqual([{ type: "async" }]);
    expect(bus.logPath).toBe(join(directory, "logs", "events.jsonl"));
    bus.emit("x", { secret: "s", text: "abcdef" });
    await bus.flush();
    expect((await readLines(bus.logPath))[0]?.payload).toEqual({
      secret: "[redacted]",
      text: "abc…[truncated 3 chars]",
    });
    await expect(
      Promise.resolve().then(() =>
        definition?.create({}, { baseDir: directory, load: async () => undefined as never }),
      ),
    ).rejects.toThrow();
  });
});
