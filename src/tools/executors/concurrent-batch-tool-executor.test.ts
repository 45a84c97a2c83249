import { describe, expect, it, vi } from "vitest";
import {
  DEFAULT_EXECUTION_SPEC,
  type Tool,
  type ToolContext,
  type ToolExecutionRequest,
  type ToolExecutionResult,
  type ToolExecutor,
} from "../../contracts/tool.js";
import { CancelScope } from "../../loop/cancel-scope.js";
import {
  ConcurrentBatchToolExecutor,
  concurrentBatchToolExecutorConfigSchema,
} from "./concurrent-batch-tool-executor.js";

function makeRequest(toolId: string, concurrencySafe: boolean): ToolExecutionRequest {
  const scope = new CancelScope();
  const tool: Tool = {
    name: toolId,
    description: "d",
    schema: () => ({}),
    executionSpec: () => ({ ...DEFAULT_EXECUTION_SPEC, concurrencySafe }),
    invoke: () => null,
  };
  return {
    toolId,
    tool,
    params: {},
    context: {} as ToolContext,
    executionSpec: { ...DEFAULT_EXECUTION_SPEC, concurrencySafe },
    metadata: {},
    signal: new AbortController().signal,
    abort: () => {},
    get cancelled() {
      return scope.cancelled;
    },
    onCancel: (callback) => scope.onCancel(callback),
  };
}

/** An inner executor whose calls stay pending until the test releases them, recording what runs when. */
function controlledInner() {
  const running = new Set<string>();
  const events: string[] = [];
  const pending = new Map<string, () => void>();
  let maxRunning = 0;
  const inner: ToolExecutor = {
    execute: (request) =>
      new Promise<ToolExecutionResult>((resolve) => {
        running.add(request.toolId);
        maxRunning = Math.max(maxRunning, running.size);
        events.push(`start ${request.toolId}`);
        pending.set(request.toolId, () => {
          running.delete(request.toolId);
          events.push(`end ${request.toolId}`);
          resolve({
            toolId: request.toolId,
            success: true,
            data: `result of ${request.toolId}`,
            metadata: {},
          });
        });
      }),
  };
  return {
    inner,
    events,
    running: () => [...running].sort(),
    maxRunning: () => maxRunning,
    release(toolId: string) {
      const done = pending.get(toolId);
      if (!done) throw new Error(`${toolId} is not running`);
      pending.delete(toolId);
      done();
    },
  };
}

const flush = async () => {
  for (let index = 0; index < 10; index++) await Promise.resolve();
};

describe("ConcurrentBatchToolExecutor", () => {
  it("has the documented config defaults", () => {
    expect(concurrentBatchToolExecutorConfigSchema().parse({})).toEqual({
      inner: { type: "safe" },
      max_concurrency: 10,
    });
    expect(concurrentBatchToolExecutorConfigSchema().safeParse({ max_concurrency: 0 }).success).toBe(false);
    expect(new ConcurrentBatchToolExecutor({ execute: vi.fn() }).maxConcurrency).toBe(10);
  });

  it("runs concurrencySafe calls together, then the unsafe ones one at a time, results in input order", async () => {
    const control = controlledInner();
    const executor = new ConcurrentBatchToolExecutor(control.inner, 10);
    const requests = [
      makeRequest("unsafe1", false),
      makeRequest("safeA", true),
      makeRequest("safeB", true),
      makeRequest("unsafe2", false),
      makeRequest("safeC", true),
    ];
    let results: ToolExecutionResult[] | undefined;
    const batch = executor.executeBatch(requests).then((value) => {
      results = value;
    });
    await flush();
    expect(control.running()).toEqual(["safeA", "safeB", "safeC"]);

    control.release("safeB");
    control.release("safeA");
    await flush();
    expect(control.running()).toEqual(["safeC"]);
    control.release("safeC");
    await flush();
    expect(control.running()).toEqual(["unsafe1"]);
    control.release("unsafe1");
    await flush();
    expect(control.running()).toEqual(["unsafe2"]);
    expect(results).toBeUndefined();
    control.release("unsafe2");
    await batch;

    expect(control.maxRunning()).toBe(3);
    expect(control.events).toEqual([
      "start safeA",
      "start safeB",
      "start safeC",
      "end safeB",
      "end safeA",
      "end safeC",
      "start unsafe1",
      "end unsafe1",
      "start unsafe2",
      "end unsafe2",
    ]);
    expect(results!.map((result) => result.toolId)).toEqual([
      "unsafe1",
      "safeA",
      "safeB",
      "unsafe2",
      "safeC",
    ]);
    expect(results!.map((result) => result.data)).toEqual([
      "result of unsafe1",
      "result of safeA",
      "result of safeB",
      "result of unsafe2",
      "result of safeC",
    ]);
  });

  it("keeps at most max_concurrency safe calls running and starts the next as one ends", async () => {
    const control = controlledInner();
    const executor = new ConcurrentBatchToolExecutor(control.inner, 2);
    const requests = ["s1", "s2", "s3", "s4", "s5"].map((id) => makeRequest(id, true));
    const batch = executor.executeBatch(requests);
    await flush();
    expect(control.running()).toEqual(["s1", "s2"]);
    control.release("s2");
    await flush();
    expect(control.running()).toEqual(["s1", "s3"]);
    control.release("s1");
    await flush();
    expect(control.running()).toEqual(["s3", "s4"]);
    control.release("s4");
    control.release("s3");
    await flush();
    expect(control.running()).toEqual(["s5"]);
    control.release("s5");
    const results = await batch;
    expect(control.maxRunning()).toBe(2);
    expect(results.map((result) => result.toolId)).toEqual(["s1", "s2", "s3", "s4", "s5"]);
  });

  it("runs only unsafe calls strictly one by one", async () => {
    const control = controlledInner();
    const executor = new ConcurrentBatchToolExecutor(control.inner, 10);
    const batch = executor.executeBatch([makeRequest("u1", false), makeRequest("u2", false)]);
    await flush();
    expect(control.running()).toEqual(["u1"]);
    control.release("u1");
    await flush();
    expect(control.running()).toEqual(["u2"]);
    control.release("u2");
    expect((await batch).map((result) => result.toolId)).toEqual(["u1", "u2"]);
    expect(control.maxRunning()).toBe(1);
  });

  it("collects failures with the successes", async () => {
    const inner: ToolExecutor = {
      execute: async (request) =>
        request.toolId === "bad"
          ? { toolId: "bad", success: false, error: "boom", metadata: {} }
          : { toolId: request.toolId, success: true, data: 1, metadata: {} },
    };
    const results = await new ConcurrentBatchToolExecutor(inner).executeBatch([
      makeRequest("good", true),
      makeRequest("bad", true),
      makeRequest("after", false),
    ]);
    expect(results.map((result) => [result.toolId, result.success])).toEqual([
      ["good", true],
      ["bad", false],
      ["after", true],
    ]);
  });

  it("returns an empty list for an empty batch", async () => {
    const execute = vi.fn();
    expect(await new ConcurrentBatchToolExecutor({ execute }).executeBatch([])).toEqual([]);
    expect(execute).not.toHaveBeenCalled();
  });

  it("delegates single calls and close to the inner executor", async () => {
    const result: ToolExecutionResult = { toolId: "x", success: true, data: 7, metadata: {} };
    const close = vi.fn(async () => {});
    const inner: ToolExecutor = { execute: vi.fn(async () => result), close };
    const executor = new ConcurrentBatchToolExecutor(inner);
    const request = makeRequest("x", false);
    expect(await executor.execute(request)).toBe(result);
    expect(inner.execute).toHaveBeenCalledExactlyOnceWith(request);
    await executor.close();
    expect(close).toHaveBeenCalledOnce();
  });
});
