import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  DEFAULT_EXECUTION_SPEC,
  type Tool,
  type ToolContext,
  type ToolExecutionRequest,
  type ToolExecutionResult,
  type ToolExecutionSpec,
  type ToolStreamPart,
} from "../../contracts/tool.js";
import {
  ToolCancelledError,
  ToolError,
  ToolTimeoutError,
  ToolUnavailableError,
} from "../../errors/error-classes.js";
import { KeelError } from "../../errors/keel-error.js";
import { CancelScope } from "../../loop/cancel-scope.js";
import { deadlines } from "../../util/deadline-queue.js";
import { SuspendToolCall } from "../suspend-tool-call.js";
import { asToolError, isPromiseLike, SafeToolExecutor } from "./safe-tool-executor.js";

interface TestRequest extends ToolExecutionRequest {
  readonly scope: CancelScope;
  readonly abortReasons: unknown[];
  readonly deltas: string[];
}

/** A ToolExecutionRequest over a real CancelScope, recording `abort()` calls. */
function makeRequest(
  tool: Tool,
  options: { spec?: Partial<ToolExecutionSpec>; params?: Record<string, unknown>; scope?: CancelScope } = {},
): TestRequest {
  const scope = options.scope ?? new CancelScope();
  let controller: AbortController | null = null;
  const abortReasons: unknown[] = [];
  const deltas: string[] = [];
  const request: TestRequest = {
    toolId: tool.name,
    tool,
    params: options.params ?? {},
    context: {
      toolCallId: "call_1",
      emitDelta: (text: string) => deltas.push(text),
    } as unknown as ToolContext,
    executionSpec: { ...DEFAULT_EXECUTION_SPEC, ...options.spec },
    metadata: {},
    scope,
    abortReasons,
    deltas,
    get signal() {
      if (controller === null) {
        const created = new AbortController();
        controller = created;
        scope.onCancel((reason) => created.abort(reason));
      }
      return controller.signal;
    },
    abort(reason: unknown) {
      abortReasons.push(reason);
      controller?.abort(reason);
    },
    get cancelled() {
      return scope.cancelled || controller?.signal.aborted === true;
    },
    onCancel: (callback) => scope.onCancel(callback),
  };
  return request;
}

function makeTool(invoke: Tool["invoke"], name = "probe"): Tool {
  return {
    name,
    description: "test tool",
    schema: () => ({}),
    executionSpec: () => DEFAULT_EXECUTION_SPEC,
    invoke,
  };
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Observe a promise's settlement without awaiting it. */
function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T } = { settled: false };
  // The executor resolves with a result even when the tool fails, so there is no rejection to handle here.
  void promise.then((value) => {
    state.settled = true;
    state.value = value;
  });
  return state;
}

const flush = () => vi.advanceTimersByTimeAsync(0);

describe("SafeToolExecutor", () => {
  beforeAll(() => {
    vi.useFakeTimers();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await vi.runAllTimersAsync();
  });
  afterAll(() => {
    vi.useRealTimers();
  });

  it("defaults to a 30000 ms timeout and validates its config", () => {
    expect(new SafeToolExecutor().defaultTimeoutMs).toBe(30_000);
    expect(new SafeToolExecutor({ default_timeout_ms: 250 }).defaultTimeoutMs).toBe(250);
    expect(() => new SafeToolExecutor({ default_timeout_ms: 0 })).toThrow();
    expect(() => new SafeToolExecutor({ default_timeout_ms: 1.5 })).toThrow();
  });

  it("returns a sync tool's value without arming a deadline", async () => {
    const add = vi.spyOn(deadlines, "add");
    const invoke = vi.fn((params: Record<string, unknown>) => (params.a as number) + 1);
    const request = makeRequest(makeTool(invoke), { params: { a: 41 } });
    const result = await new SafeToolExecutor().execute(request);
    expect(result).toEqual({ toolId: "probe", success: true, data: 42, metadata: { timeoutMs: 30_000 } });
    expect(invoke).toHaveBeenCalledExactlyOnceWith({ a: 41 }, request.context);
    expect(add).not.toHaveBeenCalled();
  });

  it("a ToolResult with ok false is an unsuccessful call that keeps its result (success = ok)", async () => {
    const failed = { ok: false, summary: "make exited 2", data: { stderr: "no rule" }, artifacts: [] };
    const withError = { ...failed, error: { code: "shell.exit_status", message: "make exited 2 (stderr)" } };
    const executor = new SafeToolExecutor();
    expect(await executor.execute(makeRequest(makeTool(() => failed)))).toEqual({
      toolId: "probe",
      success: false,
      data: failed,
      error: "make exited 2",
      metadata: { timeoutMs: 30_000 },
    });
    expect((await executor.execute(makeRequest(makeTool(() => withError)))).error).toBe(
      "make exited 2 (stderr)",
    );
    const ok = { ...failed, ok: true };
    expect(await executor.execute(makeRequest(makeTool(() => ok)))).toMatchObject({
      success: true,
      data: ok,
    });
  });

  it("turns a sync throw into a ToolError keeping the message and cause", async () => {
    const thrown = new Error("bad input");
    const result = await new SafeToolExecutor().execute(
      makeRequest(
        makeTool(() => {
          throw thrown;
        }),
      ),
    );
    expect(result.success).toBe(false);
    expect(result.error).toBe("bad input");
    expect(result.exception).toBeInstanceOf(ToolError);
    const error = result.exception as ToolError;
    expect(error.code).toBe("tool.error");
    expect(error.retryable).toBe(false);
    expect(error.cause).toBe(thrown);
    expect(error.context).toEqual({ toolId: "probe" });
    expect(result.metadata).toEqual({ timeoutMs: 30_000 });
  });

  it("resolves an async tool's value and cancels its deadline", async () => {
    const request = makeRequest(
      makeTool(async () => ({ rows: 3 })),
      { spec: { defaultTimeoutMs: 500 } },
    );
    const result = await new SafeToolExecutor().execute(request);
    expect(result).toEqual({
      toolId: "probe",
      success: true,
      data: { rows: 3 },
      metadata: { timeoutMs: 500 },
    });
    expect(deadlines.size).toBe(0);
    expect(request.abortReasons).toEqual([]);
  });

  it("turns a rejected plain Error into a ToolError keeping the message", async () => {
    const thrown = new Error("disk full");
    const result = await new SafeToolExecutor().execute(
      makeRequest(
        makeTool(async () => {
          throw thrown;
        }),
      ),
    );
    expect(result).toMatchObject({ toolId: "probe", success: false, error: "disk full" });
    expect(result.exception).toBeInstanceOf(ToolError);
    expect((result.exception as ToolError).cause).toBe(thrown);
    expect(deadlines.size).toBe(0);
  });

  it("keeps a thrown KeelError as it is", async () => {
    const thrown = new ToolUnavailableError("service down", { hint: "later" });
    const result = await new SafeToolExecutor().execute(
      makeRequest(
        makeTool(async () => {
          throw thrown;
        }),
      ),
    );
    expect(result.exception).toBe(thrown);
    expect(result.error).toBe("service down");
    expect(result.metadata).toEqual({ timeoutMs: 30_000 });
  });

  it("wraps non-Error throws and keeps a user error's retryable flag", () => {
    expect(asToolError("plain text", "t").message).toBe("plain text");
    expect(asToolError(new Error(""), "t").message).toBe("Tool 't' failed");
    expect(asToolError(Object.assign(new Error("busy"), { retryable: true }), "t").retryable).toBe(true);
    const keel = new KeelError("k");
    expect(asToolError(keel, "t")).toBe(keel);
  });

  it("times out with a ToolTimeoutError, retryable, and aborts the request", async () => {
    const pending = deferred<string>();
    const request = makeRequest(
      makeTool(() => pending.promise),
      { spec: { defaultTimeoutMs: 100 } },
    );
    const seenSignal = request.signal;
    const state = track(new SafeToolExecutor().execute(request));
    await vi.advanceTimersByTimeAsync(99);
    expect(state.settled).toBe(false);
    expect(request.abortReasons).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.settled).toBe(true);
    const result = state.value as ToolExecutionResult;
    expect(result.success).toBe(false);
    expect(result.error).toBe("Tool 'probe' timed out after 100 ms");
    expect(result.metadata).toEqual({ timeoutMs: 100 });
    expect(result.exception).toBeInstanceOf(ToolTimeoutError);
    const error = result.exception as ToolTimeoutError;
    expect(error.code).toBe("tool.timeout");
    expect(error.retryable).toBe(true);
    expect(error.timeoutMs).toBe(100);
    expect(error.hint).toBe(
      "Raise the tool's timeoutMs or the executor's default_timeout_ms, or make the tool faster",
    );
    expect(request.abortReasons).toEqual([error]);
    expect(seenSignal.aborted).toBe(true);
    expect(seenSignal.reason).toBe(error);

    // A late result does not change the outcome.
    pending.resolve("late");
    await flush();
    expect(state.value).toBe(result);
  });

  it("uses the executor's default timeout when the tool has none", async () => {
    const state = track(
      new SafeToolExecutor({ default_timeout_ms: 40 }).execute(
        makeRequest(makeTool(() => new Promise(() => {}))),
      ),
    );
    await vi.advanceTimersByTimeAsync(39);
    expect(state.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.value?.exception).toBeInstanceOf(ToolTimeoutError);
    expect(state.value?.error).toBe("Tool 'probe' timed out after 40 ms");
  });

  it("ends with a ToolCancelledError when the run is cancelled", async () => {
    const request = makeRequest(makeTool(() => new Promise(() => {})));
    const state = track(new SafeToolExecutor().execute(request));
    await flush();
    expect(state.settled).toBe(false);
    request.scope.cancel({ type: "cancelled", value: "user" });
    await flush();
    expect(state.settled).toBe(true);
    const result = state.value as ToolExecutionResult;
    expect(result.success).toBe(false);
    expect(result.error).toBe("Tool 'probe' cancelled before completion");
    expect(result.exception).toBeInstanceOf(ToolCancelledError);
    expect((result.exception as ToolCancelledError).code).toBe("tool.cancelled");
    expect(result.metadata).toEqual({ timeoutMs: 30_000, cancelled: true });
    expect(deadlines.size).toBe(0);
    // The timeout no longer fires.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(request.abortReasons).toEqual([]);
  });

  it("says a call cut off by the run's timeout was stopped, not cancelled", async () => {
    const request = makeRequest(makeTool(() => new Promise(() => {})));
    const state = track(new SafeToolExecutor().execute(request));
    await flush();
    request.scope.cancel({ type: "stopped", value: "timeout" });
    await flush();
    const result = state.value as ToolExecutionResult;
    expect(result.error).toBe("Tool 'probe' was stopped: the run ran out of time");
    expect((result.exception as ToolCancelledError).hint).toBe(
      "Raise runtime.step_timeout_ms (or budget.maxDurationMs), or make the tool faster",
    );
    expect(result.metadata).toEqual({ timeoutMs: 30_000, cancelled: true });
  });

  it("does not start a tool when the run is already cancelled", async () => {
    const scope = new CancelScope();
    scope.cancel({ type: "cancelled" });
    const invoke = vi.fn(() => "ran");
    const result = await new SafeToolExecutor().execute(makeRequest(makeTool(invoke), { scope }));
    expect(invoke).not.toHaveBeenCalled();
    expect(result.exception).toBeInstanceOf(ToolCancelledError);
    expect(result.metadata).toEqual({ timeoutMs: 30_000, cancelled: true });
  });

  it("unregisters its cancel callback once the tool finishes", async () => {
    const request = makeRequest(makeTool(async () => "done"));
    const result = await new SafeToolExecutor().execute(request);
    expect(result.success).toBe(true);
    const callbacks = (request.scope as unknown as { callbacks: unknown[] | null }).callbacks;
    expect(callbacks ?? []).toEqual([]);
  });

  // BUG (src/tools/executors/safe-tool-executor.ts, race(), line ~61): when the run is cancelled while the tool's
  // synchronous part runs, CancelScope.onCancel calls the callback at once, and `finish` calls `unregister()`
  // before the `const unregister` binding is initialised: the promise rejects with a ReferenceError instead of
  // resolving a cancelled result ("Never throws").
  it("resolves a cancelled result when the tool cancels the run synchronously", async () => {
    const scope = new CancelScope();
    const request = makeRequest(
      makeTool(() => {
        scope.cancel({ type: "cancelled", value: "tool asked" });
        return new Promise(() => {});
      }),
      { scope },
    );
    const result = await new SafeToolExecutor().execute(request);
    expect(result.exception).toBeInstanceOf(ToolCancelledError);
    expect(result.metadata).toEqual({ timeoutMs: 30_000, cancelled: true });
  });

  it("reports a SuspendToolCall as it is, not as a tool error", async () => {
    const suspension = new SuspendToolCall({ reason: "pick one" });
    const result = await new SafeToolExecutor().execute(
      makeRequest(
        makeTool(async () => {
          throw suspension;
        }),
      ),
    );
    expect(result).toEqual({
      toolId: "probe",
      success: false,
      error: "suspended",
      exception: suspension,
      metadata: { timeoutMs: 30_000 },
    });
  });

  describe("streaming tools", () => {
    function streamingTool(parts: () => AsyncIterable<ToolStreamPart>): Tool {
      const invoke = vi.fn(() => "invoke was called");
      return Object.assign(makeTool(invoke, "streamer"), { invokeStream: parts });
    }

    it("emits each delta and returns the result part's data", async () => {
      const request = makeRequest(
        streamingTool(async function* () {
          yield { type: "delta", text: "Hel" };
          yield { type: "delta", text: "lo" };
          yield { type: "result", data: { greeting: "Hello" } };
        }),
      );
      const result = await new SafeToolExecutor().execute(request);
      expect(request.deltas).toEqual(["Hel", "lo"]);
      expect(result).toEqual({
        toolId: "streamer",
        success: true,
        data: { greeting: "Hello" },
        metadata: { timeoutMs: 30_000 },
      });
    });

    it("returns the joined text when there is no result part", async () => {
      const request = makeRequest(
        streamingTool(async function* () {
          yield { type: "delta", text: "a" };
          yield { type: "delta", text: "b" };
        }),
      );
      expect((await new SafeToolExecutor().execute(request)).data).toBe("ab");
    });

    it("turns a stream failure into a ToolError", async () => {
      const request = makeRequest(
        streamingTool(async function* () {
          yield { type: "delta", text: "partial" };
          throw new Error("stream broke");
        }),
      );
      const result = await new SafeToolExecutor().execute(request);
      expect(request.deltas).toEqual(["partial"]);
      expect(result.exception).toBeInstanceOf(ToolError);
      expect(result.error).toBe("stream broke");
    });

    it("stops reading the stream when the run is cancelled", async () => {
      const scope = new CancelScope();
      const read: string[] = [];
      const request = makeRequest(
        streamingTool(async function* () {
          read.push("first");
          yield { type: "delta", text: "first" };
          scope.cancel({ type: "cancelled" });
          read.push("second");
          yield { type: "delta", text: "second" };
          read.push("third");
          yield { type: "delta", text: "third" };
        }),
        { scope },
      );
      const result = await new SafeToolExecutor().execute(request);
      await flush();
      expect(result.exception).toBeInstanceOf(ToolCancelledError);
      expect(result.metadata).toEqual({ timeoutMs: 30_000, cancelled: true });
      expect(read).toEqual(["first", "second"]);
      expect(request.deltas).toEqual(["first", "second"]);
    });
  });

  describe('interruptBehavior "block"', () => {
    it("waits for the tool through cancellation and past its timeout", async () => {
      const pending = deferred<string>();
      const request = makeRequest(
        makeTool(() => pending.promise),
        { spec: { interruptBehavior: "block", defaultTimeoutMs: 10 } },
      );
      const state = track(new SafeToolExecutor().execute(request));
      request.scope.cancel({ type: "cancelled" });
      await vi.advanceTimersByTimeAsync(1000);
      expect(state.settled).toBe(false);
      expect(request.abortReasons).toEqual([]);
      pending.resolve("finished anyway");
      await flush();
      expect(state.value).toEqual({
        toolId: "probe",
        success: true,
        data: "finished anyway",
        metadata: { timeoutMs: 10 },
      });
    });

    it("runs even when the run was cancelled before it started, and reports failures", async () => {
      const scope = new CancelScope();
      scope.cancel({ type: "cancelled" });
      const invoke = vi.fn(async () => {
        throw new Error("late failure");
      });
      const result = await new SafeToolExecutor().execute(
        makeRequest(makeTool(invoke), { scope, spec: { interruptBehavior: "block" } }),
      );
      expect(invoke).toHaveBeenCalledOnce();
      expect(result.success).toBe(false);
      expect(result.exception).toBeInstanceOf(ToolError);
      expect(result.error).toBe("late failure");
      expect(result.metadata).toEqual({ timeoutMs: 30_000 });
    });
  });
});

describe("isPromiseLike", () => {
  it("recognises thenables only", () => {
    const withThen = <T extends object>(target: T, then: unknown): T =>
      // biome-ignore lint/suspicious/noThenProperty: building thenables is the point of this test
      Object.defineProperty(target, "then", { value: then });
    expect(isPromiseLike(Promise.resolve(1))).toBe(true);
    expect(isPromiseLike(withThen({}, () => {}))).toBe(true);
    expect(
      isPromiseLike(
        withThen(
          () => {},
          () => {},
        ),
      ),
    ).toBe(true);
    expect(isPromiseLike(withThen({}, 1))).toBe(false);
    expect(isPromiseLike(null)).toBe(false);
    expect(isPromiseLike(42)).toBe(false);
  });
});
