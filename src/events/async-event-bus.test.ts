import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerEventBusBuiltins } from "../builtins/builtin-event-buses.js";
import { RuntimeEvent } from "../contracts/runtime-event.js";
import { type Logger, setLogger } from "../logging/logger.js";
import { getPlugin } from "../plugins/plugin-registry.js";
import { AsyncEventBus } from "./async-event-bus.js";

interface LogEntry {
  level: string;
  message: string;
  details: Record<string, unknown> | undefined;
}

let logged: LogEntry[];
let previous: Logger;

beforeEach(() => {
  logged = [];
  const capture =
    (level: string) =>
    (message: string, details?: Record<string, unknown>): void => {
      logged.push({ level, message, details });
    };
  previous = setLogger({
    debug: capture("debug"),
    info: capture("info"),
    warn: capture("warn"),
    error: capture("error"),
  });
});

afterEach(() => {
  setLogger(previous);
});

describe("AsyncEventBus", () => {
  it("calls handlers of the exact name, then wildcard handlers, in subscription order", () => {
    const bus = new AsyncEventBus();
    const calls: string[] = [];
    bus.subscribe("*", (event) => void calls.push(`*1 ${event.kind}`));
    bus.subscribe("step.started", () => void calls.push("named1"));
    bus.subscribe("step.started", () => void calls.push("named2"));
    bus.subscribe("*", () => void calls.push("*2"));
    bus.subscribe("step.finished", () => void calls.push("other"));
    bus.emit("step.started", { step: 1 });
    expect(calls).toEqual(["named1", "named2", "*1 step.started", "*2"]);
  });

  it("emit builds a stamped event outside any run and returns it", () => {
    const bus = new AsyncEventBus();
    const before = Date.now();
    const event = bus.emit("config.reloaded", { oldVersion: "1", newVersion: "2", changedAgents: [] });
    expect(event).toBeInstanceOf(RuntimeEvent);
    expect(event.timestampMs).toBeGreaterThanOrEqual(before);
    expect(event).toMatchObject({ kind: "config.reloaded", runId: "", sequence: 0 });
    expect(bus.emit("custom.event").payload).toEqual({});
  });

  it("publishes a run's event as it is, without copying", () => {
    const bus = new AsyncEventBus();
    const seen: RuntimeEvent[] = [];
    bus.subscribe("*", (event) => void seen.push(event));
    const event = new RuntimeEvent("llm.delta", { text: "hi" }, 1, "run", "session", "agent", 7);
    bus.publish(event);
    expect(seen[0]).toBe(event);
    expect(bus.getHistory()[0]).toBe(event);
  });

  it("keeps a ring of the newest events, newest last, filtered by name and limit", () => {
    const bus = new AsyncEventBus({ maxHistory: 3 });
    for (let step = 1; step <= 5; step++) bus.emit(step % 2 ? "odd" : "even", { step });
    expect(bus.getHistory().map((event) => event.payload.step)).toEqual([3, 4, 5]);
    expect(bus.getHistory({ name: "odd" }).map((event) => event.payload.step)).toEqual([3, 5]);
    expect(bus.getHistory({ limit: 2 }).map((event) => event.payload.step)).toEqual([4, 5]);
    expect(bus.getHistory({ name: "odd", limit: 1 }).map((event) => event.payload.step)).toEqual([5]);
    expect(bus.getHistory({ limit: 0 })).toEqual([]);
    expect(bus.getHistory({ limit: 99 })).toHaveLength(3);
    bus.emit("odd", { step: 6 });
    expect(bus.getHistory().map((event) => event.payload.step)).toEqual([4, 5, 6]);
    bus.clearHistory();
    expect(bus.getHistory()).toEqual([]);
    bus.emit("even", { step: 7 });
    expect(bus.getHistory().map((event) => event.payload.step)).toEqual([7]);
  });

  it("keeps no history with maxHistory 0 and rejects a negative size", () => {
    const bus = new AsyncEventBus({ maxHistory: 0 });
    bus.emit("x");
    expect(bus.getHistory()).toEqual([]);
    expect(() => new AsyncEventBus({ maxHistory: -1 })).toThrow(RangeError);
  });

  it("warns when a declared event misses required payload keys, and still delivers it", () => {
    const bus = new AsyncEventBus();
    const seen: string[] = [];
    bus.subscribe("tool.started", (event) => void seen.push(event.kind));
    bus.emit("tool.started", { toolId: "add" });
    expect(seen).toEqual(["tool.started"]);
    const warnings = logged.filter((entry) => entry.level === "warn");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain("toolCallId, params");
    expect(warnings[0]?.details).toMatchObject({ event: "tool.started", missing: ["toolCallId", "params"] });
  });

  it("does not warn for complete payloads or undeclared names", () => {
    const bus = new AsyncEventBus();
    bus.emit("tool.started", { toolCallId: "c1", toolId: "add", params: {} });
    bus.emit("my.own.event", {});
    bus.emit("context.assemble.started");
    expect(logged).toEqual([]);
  });

  it("logs and swallows handler errors and rejections, and keeps calling the others", async () => {
    const bus = new AsyncEventBus();
    const calls: string[] = [];
    bus.subscribe("x", () => {
      throw new Error("sync boom");
    });
    bus.subscribe("x", async () => {
      throw new Error("async boom");
    });
    bus.subscribe("*", () => void calls.push("wildcard"));
    expect(() => bus.emit("x")).not.toThrow();
    expect(calls).toEqual(["wildcard"]);
    await bus.flush();
    const errors = logged.filter((entry) => entry.level === "error");
    expect(errors.map((entry) => (entry.details?.error as Error | undefined)?.message)).toEqual([
      "sync boom",
      "async boom",
    ]);
    expect(errors[0]?.message).toContain('"x"');
  });

  it("flush waits for asynchronous handlers, including ones they start", async () => {
    const bus = new AsyncEventBus();
    const done: string[] = [];
    bus.subscribe("first", async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      done.push("first");
      bus.emit("second");
    });
    bus.subscribe("second", async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      done.push("second");
    });
    bus.emit("first");
    expect(done).toEqual([]);
    await bus.flush();
    expect(done).toEqual(["first", "second"]);
    await bus.flush();
  });

  it("lets a handler unsubscribe itself or a later handler during dispatch", () => {
    const bus = new AsyncEventBus();
    const calls: string[] = [];
    const offSelf = bus.subscribe("x", () => {
      calls.push("once");
      offSelf();
    });
    let offLater = (): void => {};
    bus.subscribe("x", () => {
      calls.push("remover");
      offLater();
    });
    offLater = bus.subscribe("x", () => void calls.push("later"));
    bus.emit("x");
    bus.emit("x");
    expect(calls).toEqual(["once", "remover", "remover"]);
  });

  it("does not call a handler subscribed during dispatch until the next event", () => {
    const bus = new AsyncEventBus();
    const calls: string[] = [];
    bus.subscribe("x", () => {
      calls.push("first");
      if (calls.length === 1) bus.subscribe("x", () => void calls.push("added"));
    });
    bus.emit("x");
    expect(calls).toEqual(["first"]);
    bus.emit("x");
    expect(calls).toEqual(["first", "first", "added"]);
  });

  it("unsubscribes one registration of a handler subscribed twice, and twice is harmless", () => {
    const bus = new AsyncEventBus();
    let count = 0;
    const handler = (): void => void count++;
    const off1 = bus.subscribe("*", handler);
    bus.subscribe("*", handler);
    off1();
    off1();
    bus.emit("x");
    expect(count).toBe(1);
  });

  it("close waits for handlers, then drops every subscription", async () => {
    const bus = new AsyncEventBus();
    let finished = false;
    let calls = 0;
    bus.subscribe("x", async () => {
      calls++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      finished = true;
    });
    bus.subscribe("*", () => void calls++);
    bus.emit("x");
    await bus.close();
    expect(finished).toBe(true);
    bus.emit("x");
    expect(calls).toBe(2);
  });

  it("registers as the async event bus builtin with max_history", async () => {
    registerEventBusBuiltins();
    registerEventBusBuiltins();
    const definition = getPlugin("event_bus", "async");
    const bus = (await definition?.create(
      { max_history: 2 },
      {
        baseDir: ".",
        load: async () => undefined as never,
      },
    )) as AsyncEventBus;
    expect(bus).toBeInstanceOf(AsyncEventBus);
    expect(bus.maxHistory).toBe(2);
    const byDefault = (await definition?.create(
      {},
      { baseDir: ".", load: async () => undefined as never },
    )) as AsyncEventBus;
    expect(byDefault.maxHistory).toBe(1000);
  });
});
