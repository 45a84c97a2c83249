import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  DEFAULT_EXECUTION_SPEC,
  isBatchToolExecutor,
  type StreamingTool,
  type Tool,
  type ToolContext,
  type ToolExecutionRequest,
  type ToolExecutionResult,
  type ToolExecutionSpec,
  type ToolExecutor,
} from "../contracts/tool.js";
import { PermanentToolError, ToolCancelledError, ToolTimeoutError } from "../errors/error-classes.js";
import { KeelError } from "../errors/keel-error.js";

/** Options of {@link describeToolExecutorConformance}. */
export interface ToolExecutorConformanceOptions {
  /** The executor runs a step's calls together (`executeBatch`); its batch contract is checked too. */
  batch?: boolean;
}

/** A request as the loop makes it, and the handles a test drives it with. */
export interface ConformanceToolRequest extends ToolExecutionRequest {
  /** Cancel the run the call belongs to. */
  cancelRun(reason?: unknown): void;
  /** The text the tool streamed through `ctx.emitDelta`. */
  readonly deltas: string[];
}

/**
 * A `ToolExecutionRequest` for `tool`: its call signal, made on first read, follows the run's cancellation and
 * `abort()`; `ctx.signal` is that same signal.
 */
export function conformanceToolRequest(
  tool: Tool,
  options: { params?: Record<string, unknown>; spec?: Partial<ToolExecutionSpec> } = {},
): ConformanceToolRequest {
  const run = new AbortController();
  let call: AbortController | null = null;
  const deltas: string[] = [];
  const params = options.params ?? {};
  const state: Record<string, unknown> = {};
  const request: ConformanceToolRequest = {
    toolId: tool.name,
    tool,
    params,
    executionSpec: { ...tool.executionSpec(), ...options.spec },
    metadata: {},
    deltas,
    get signal() {
      if (call === null) {
        const created = new AbortController();
        call = created;
        if (run.signal.aborted) created.abort(run.signal.reason);
        else run.signal.addEventListener("abort", () => created.abort(run.signal.reason), { once: true });
      }
      return call.signal;
    },
    abort(reason: unknown) {
      call?.abort(reason);
    },
    get cancelled() {
      return run.signal.aborted || call?.signal.aborted === true;
    },
    onCancel(callback) {
      if (run.signal.aborted) {
        callback(run.signal.reason);
        return () => {};
      }
      const listener = () => callback(run.signal.reason);
      run.signal.addEventListener("abort", listener, { once: true });
      return () => run.signal.removeEventListener("abort", listener);
    },
    cancelRun(reason: unknown = new Error("run cancelled")) {
      run.abort(reason);
    },
    context: {
      toolCallId: "call_1",
      toolId: tool.name,
      arguments: params,
      kwargs: {},
      metadata: {},
      state,
      session: { id: "session-1", state },
      resumeInput: undefined,
      get signal() {
        return request.signal;
      },
      emitDelta: (text: string) => void deltas.push(text),
    } as unknown as ToolContext,
  };
  return request;
}

/** A tool whose `invoke` is `invoke`, with the default execution spec changed by `spec`. */
export function conformanceTool(
  invoke: Tool["invoke"],
  spec: Partial<ToolExecutionSpec> = {},
  name = "probe",
): Tool {
  return {
    name,
    description: "conformance probe",
    schema: () => ({ type: "object" }),
    executionSpec: () => ({ ...DEFAULT_EXECUTION_SPEC, ...spec }),
    invoke,
  };
}

/** A promise that never settles unless `signal` aborts (then it rejects with the reason). */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
  );
}

function expectFailure(result: ToolExecutionResult, toolId = "probe"): KeelError {
  expect(result.toolId).toBe(toolId);
  expect(result.success).toBe(false);
  expect(typeof result.error).toBe("string");
  expect(KeelError.isInstance(result.exception)).toBe(true);
  expect(typeof result.metadata).toBe("object");
  return result.exception as KeelError;
}

/**
 * Register the vitest suite every `ToolExecutor` must pass: results with `success`/`data`/`error`, tool errors
 * (thrown or rejected) as typed `success: false` results rather than rejections, timeouts as a retryable
 * `ToolTimeoutError` that aborts the call's signal, run cancellation (and `interruptBehavior: "block"` tools
 * waited for), streaming tools, and with `batch: true` the `executeBatch` contract. `factory` makes a fresh
 * executor per test. `conformanceToolRequest` and `conformanceTool` build requests for further tests.
 *
 * @example
 * describeToolExecutorConformance("audited", () => new AuditedExecutor(new SafeToolExecutor()));
 */
export function describeToolExecutorConformance(
  name: string,
  factory: () => Promise<ToolExecutor> | ToolExecutor,
  options: ToolExecutorConformanceOptions = {},
): void {
  describe(`ToolExecutor conformance: ${name}`, () => {
    let executor: ToolExecutor;

    beforeEach(async () => {
      executor = await factory();
    });

    afterEach(async () => {
      await executor.close?.();
    });

    it("returns a successful result with the tool's value, synchronous or not", async () => {
      for (const invoke of [() => ({ sum: 42 }), async () => ({ sum: 42 })]) {
        const request = conformanceToolRequest(conformanceTool(invoke), { params: { a: 40, b: 2 } });
        const result = await executor.execute(request);
        expect(result).toMatchObject({ toolId: "probe", success: true, data: { sum: 42 } });
        expect(result.error).toBeUndefined();
        expect(typeof result.metadata).toBe("object");
      }
    });

    it("passes the params and the context to the tool", async () => {
      const seen: unknown[] = [];
      const tool = conformanceTool((params, ctx) => void seen.push(params, ctx.toolCallId));
      await executor.execute(conformanceToolRequest(tool, { params: { query: "keel" } }));
      expect(seen).toEqual([{ query: "keel" }, "call_1"]);
    });

    it("turns a thrown or rejected error into success: false with a typed exception, never a rejection", async () => {
      const failing = [
        () => {
          throw new Error("disk on fire");
        },
        async () => {
          throw new Error("disk on fire");
        },
      ];
      for (const invoke of failing) {
        const result = await executor.execute(conformanceToolRequest(conformanceTool(invoke)));
        expectFailure(result);
        expect(result.error).toContain("disk on fire");
      }
    });

    it("keeps a KeelError the tool threw as the exception", async () => {
      const thrown = new PermanentToolError("no such account");
      const result = await executor.execute(
        conformanceToolRequest(
          conformanceTool(() => {
            throw thrown;
          }),
        ),
      );
      expect(expectFailure(result)).toBe(thrown);
    });

    it("times a call out with a retryable ToolTimeoutError and aborts the call's signal", async () => {
      let signal: AbortSignal | undefined;
      const tool = conformanceTool(
        (_params, ctx) => {
          signal = ctx.signal;
          return untilAborted(ctx.signal);
        },
        { defaultTimeoutMs: 20 },
      );
      const request = conformanceToolRequest(tool);
      const error = expectFailure(await executor.execute(request));
      expect(error).toBeInstanceOf(ToolTimeoutError);
      expect(error.retryable).toBe(true);
      expect(signal?.aborted).toBe(true);
    });

    it("ends a running call when its run is cancelled, with a ToolCancelledError", async () => {
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      let signal: AbortSignal | undefined;
      const tool = conformanceTool((_params, ctx) => {
        signal = ctx.signal;
        started();
        return new Promise(() => {});
      });
      const request = conformanceToolRequest(tool);
      const pending = executor.execute(request);
      await running;
      request.cancelRun();
      expect(expectFailure(await pending)).toBeInstanceOf(ToolCancelledError);
      expect(signal?.aborted).toBe(true);
    });

    it("does not start a call whose run is already cancelled", async () => {
      let invoked = false;
      const request = conformanceToolRequest(
        conformanceTool(() => {
          invoked = true;
        }),
      );
      request.cancelRun();
      expect(expectFailure(await executor.execute(request))).toBeInstanceOf(ToolCancelledError);
      expect(invoked).toBe(false);
    });

    it('waits for a tool with interruptBehavior "block" even when its run is cancelled', async () => {
      let finish!: (value: unknown) => void;
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const tool = conformanceTool(
        () => {
          started();
          return new Promise((resolve) => {
            finish = resolve;
          });
        },
        { interruptBehavior: "block" },
      );
      const request = conformanceToolRequest(tool);
      const pending = executor.execute(request);
      await running;
      request.cancelRun();
      finish({ written: true });
      expect(await pending).toMatchObject({ success: true, data: { written: true } });
    });

    it("streams a streaming tool's text through ctx.emitDelta and returns its result part", async () => {
      const tool: StreamingTool = {
        ...conformanceTool(() => "unused"),
        async *invokeStream() {
          yield { type: "delta", text: "Hel" };
          yield { type: "delta", text: "lo" };
          yield { type: "result", data: { greeting: "Hello" } };
        },
      };
      const request = conformanceToolRequest(tool);
      const result = await executor.execute(request);
      expect(result).toMatchObject({ success: true, data: { greeting: "Hello" } });
      expect(request.deltas.join("")).toBe("Hello");
    });

    if (options.batch) {
      it("executeBatch returns one result per request, in request order, failures included", async () => {
        expect(isBatchToolExecutor(executor)).toBe(true);
        if (!isBatchToolExecutor(executor)) return;
        const requests = [
          conformanceToolRequest(conformanceTool(async () => "first", { concurrencySafe: true }, "first")),
          conformanceToolRequest(
            conformanceTool(
              () => {
                throw new Error("second failed");
              },
              {},
              "second",
            ),
          ),
          conformanceToolRequest(conformanceTool(() => "third", { concurrencySafe: true }, "third")),
        ];
        const results = await executor.executeBatch(requests);
        expect(results.map((result) => [result.toolId, result.success, result.data])).toEqual([
          ["first", true, "first"],
          ["second", false, undefined],
          ["third", true, "third"],
        ]);
        expectFailure(results[1]!, "second");
      });
    }
  });
}
