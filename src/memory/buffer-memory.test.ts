import { describe, expect, it } from "vitest";
import type { RunContext, ToolResultRecord } from "../contracts/tool.js";
import { BufferMemory } from "./buffer-memory.js";
import { WindowBufferMemory } from "./window-buffer-memory.js";

function makeContext(options: {
  state?: Record<string, unknown>;
  inputText?: string;
  toolResults?: ToolResultRecord[];
  finalOutput?: unknown;
}): RunContext {
  const scratch: Record<string, unknown> = {};
  if (options.finalOutput !== undefined) scratch.finalOutput = options.finalOutput;
  return {
    state: options.state ?? {},
    inputText: options.inputText ?? "",
    toolResults: options.toolResults ?? [],
    scratch,
    memoryView: {},
  } as unknown as RunContext;
}

describe("BufferMemory", () => {
  it("injects nothing but an empty list into a fresh session", () => {
    const ctx = makeContext({});
    new BufferMemory().inject(ctx);
    expect(ctx.memoryView).toEqual({ history: [] });
  });

  it("writes back input, tool results and output, and injects them in the next run", () => {
    const state: Record<string, unknown> = {};
    const memory = new BufferMemory();
    memory.writeback(
      makeContext({
        state,
        inputText: "add 2 and 40",
        toolResults: [{ toolCallId: "c1", toolId: "add", result: 42, success: true }],
        finalOutput: "42",
      }),
    );
    expect(state).toEqual({
      memory_buffer: [{ input: "add 2 and 40", toolResults: [{ toolId: "add", result: 42 }], output: "42" }],
    });
    const next = makeContext({ state });
    memory.inject(next);
    expect(next.memoryView.history).toEqual([
      { input: "add 2 and 40", toolResults: [{ toolId: "add", result: 42 }], output: "42" },
    ]);
  });

  it("leaves out output when the run produced none", () => {
    const state: Record<string, unknown> = {};
    new BufferMemory().writeback(makeContext({ state, inputText: "hi" }));
    expect(state.memory_buffer).toEqual([{ input: "hi", toolResults: [] }]);
  });

  it("honours custom keys and trims to maxItems on writeback", () => {
    const state: Record<string, unknown> = {};
    const memory = new BufferMemory({ stateKey: "mem", viewKey: "past", maxItems: 2 });
    for (const input of ["one", "two", "three"]) memory.writeback(makeContext({ state, inputText: input }));
    expect((state.mem as { input: string }[]).map((record) => record.input)).toEqual(["two", "three"]);
    const ctx = makeContext({ state });
    memory.inject(ctx);
    expect(Object.keys(ctx.memoryView)).toEqual(["past"]);
    expect((ctx.memoryView.past as { input: string }[]).map((record) => record.input)).toEqual([
      "two",
      "three",
    ]);
  });

  it("injects only the newest maxItems records when the state holds more", () => {
    const state = { memory_buffer: [{ input: "a" }, { input: "b" }, { input: "c" }] };
    const ctx = makeContext({ state });
    new BufferMemory({ maxItems: 2 }).inject(ctx);
    expect(ctx.memoryView.history).toEqual([{ input: "b" }, { input: "c" }]);
  });

  it("keeps the injected view stable when writeback appends later in the run", () => {
    const state: Record<string, unknown> = {};
    const memory = new BufferMemory();
    const ctx = makeContext({ state, inputText: "now" });
    memory.inject(ctx);
    memory.writeback(ctx);
    expect(ctx.memoryView.history).toEqual([]);
    expect(state.memory_buffer).toEqual([{ input: "now", toolResults: [] }]);
  });

  it("replaces a state value that is not a list", () => {
    const state: Record<string, unknown> = { memory_buffer: "corrupt" };
    new BufferMemory().writeback(makeContext({ state, inputText: "x" }));
    expect(state.memory_buffer).toEqual([{ input: "x", toolResults: [] }]);
  });

  it("retrieves records whose input or output contains the query, case-insensitively, newest first", () => {
    const state = {
      memory_buffer: [
        { input: "What is the Capital of France?", toolResults: [], output: "Paris" },
        { input: "weather", toolResults: [], output: { city: "PARIS", temp: 20 } },
        { input: "unrelated", toolResults: [{ toolId: "t", result: "paris" }], output: "no" },
        { input: "paris again", toolResults: [] },
      ],
    };
    const found = new BufferMemory().retrieve("paris", makeContext({ state }));
    expect(found.map((record) => record.input)).toEqual([
      "paris again",
      "weather",
      "What is the Capital of France?",
    ]);
    expect(new BufferMemory().retrieve("london", makeContext({ state }))).toEqual([]);
  });

  it("skips outputs that cannot be serialised when searching", () => {
    const cyclic: Record<string, unknown> = { text: "needle" };
    cyclic.self = cyclic;
    const state = { memory_buffer: [{ input: "other", toolResults: [], output: cyclic }] };
    expect(new BufferMemory().retrieve("needle", makeContext({ state }))).toEqual([]);
  });

  it("retrieves nothing from a fresh session", () => {
    expect(new BufferMemory().retrieve("x", makeContext({}))).toEqual([]);
  });
});

describe("WindowBufferMemory", () => {
  it("defaults to a window of 20 records", () => {
    const memory = new WindowBufferMemory();
    expect(memory.windowSize).toBe(20);
    expect(memory.maxItems).toBe(20);
    expect(memory.stateKey).toBe("memory_buffer");
    expect(memory.viewKey).toBe("history");
  });

  it("keeps only the newest windowSize records", () => {
    const state: Record<string, unknown> = {};
    const memory = new WindowBufferMemory({ windowSize: 3 });
    for (let index = 1; index <= 5; index++) memory.writeback(makeContext({ state, inputText: `q${index}` }));
    const ctx = makeContext({ state });
    memory.inject(ctx);
    expect((ctx.memoryView.history as { input: string }[]).map((record) => record.input)).toEqual([
      "q3",
      "q4",
      "q5",
    ]);
  });
});
