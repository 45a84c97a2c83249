import { describe, expect, it } from "vitest";
import {
  DEFAULT_EXECUTION_SPEC,
  type Tool,
  type ToolContext,
  type ToolExecutionRequest,
  type ToolExecutionStreamPart,
  type ToolStreamPart,
} from "../contracts/tool.js";
import { ToolUnavailableError } from "../errors/error-classes.js";
import { CancelScope } from "../loop/cancel-scope.js";
import { executeToolCall } from "./execute-tool-call.js";
import { ConcurrentBatchToolExecutor } from "./executors/concurrent-batch-tool-executor.js";
import { RetryToolExecutor } from "./executors/retry-tool-executor.js";
import { SafeToolExecutor } from "./executors/safe-tool-executor.js";

/** A request over a real CancelScope whose context records the deltas sent through `emitDelta`. */
function makeRequest(
  tool: Tool,
  timeoutMs: number | null = null,
): ToolExecutionRequest & { deltas: string[] } {
  const scope = new CancelScope();
  let controller: AbortController | null = null;
  const deltas: string[] = [];
  return {
    toolId: tool.name,
    tool,
    params: {},
    context: {
      toolCallId: "call_1",
      emitDelta: (text: string) => deltas.push(text),
    } as unknown as ToolContext,
    executionSpec: { ...DEFAULT_EXECUTION_SPEC, defaultTimeoutMs: timeoutMs },
    metadata: {},
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
      controller?.abort(reason);
    },
    get cancelled() {
      return scope.cancelled || controller?.signal.aborted === true;
    },
    onCancel: (callback) => scope.onCancel(callback),
  };
}

function streamingTool(parts: () => AsyncIterable<ToolStreamPart>): Tool & {
  invokeStream: () => AsyncIterable<ToolStreamPart>;
} {
  return {
    name: "spell",
    description: "",
    schema: () => ({}),
    executionSpec: () => DEFAULT_EXECUTION_SPEC,
    invoke: () => "not streamed",
    invokeStream: parts,
  };
}

async function all(parts: AsyncIterable<ToolExecutionStreamPart>): Promise<ToolExecutionStreamPart[]> {
  const collected: ToolExecutionStreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

const keel = () =>
  streamingTool(async function* () {
    yield { type: "delta", text: "k" };
    yield { type: "delta", text: "ee" };
    yield { type: "delta", text: "l" };
  });

describe("executeStream of the builtin executors", () => {
  it("safe yields the tool's deltas as they come, then the call's result, and emits nothing itself", async () => {
    const request = makeRequest(keel());
    const parts = await all(new SafeToolExecutor().executeStream(request));
    expect(parts).toEqual([
      { type: "delta", text: "k" },
      { type: "delta", text: "ee" },
      { type: "delta", text: "l" },
      {
        type: "result",
        result: { toolId: "spell", success: true, data: "keel", metadata: { timeoutMs: 30_000 } },
      },
    ]);
    expect(request.deltas).toEqual([]);
  });

  it("safe's stream ends with the timeout's failure when the tool's stream outlives its timeout", async () => {
    const request = makeRequest(
      streamingTool(async function* () {
        yield { type: "delta", text: "first" };
        await new Promise(() => {}); // never ends: only the timeout ends the call
        yield { type: "delta", text: "too late" };
      }),
      20,
    );
    const parts = await all(new SafeToolExecutor().executeStream(request));
    expect(parts.map((part) => part.type)).toEqual(["delta", "result"]);
    const last = parts.at(-1) as Extract<ToolExecutionStreamPart, { type: "result" }>;
    expect(last.result.success).toBe(false);
    expect((last.result.exception as { code?: string }).code).toBe("tool.timeout");
  });

  it("retry yields the deltas of every attempt and the last attempt's result with its retry metadata", async () => {
    let attempt = 0;
    const flaky = streamingTool(async function* () {
      attempt++;
      yield { type: "delta", text: `try ${attempt};` };
      if (attempt === 1) throw new ToolUnavailableError("down for a moment");
      yield { type: "result", data: "up" };
    });
    const executor = new RetryToolExecutor({
      inner: new SafeToolExecutor(),
      max_attempts: 3,
      initial_delay_ms: 0,
      backoff_multiplier: 2,
      max_delay_ms: 0,
      jitter: "none",
    });
    const parts = await all(executor.executeStream(makeRequest(flaky)));
    expect(parts.slice(0, 2)).toEqual([
      { type: "delta", text: "try 1;" },
      { type: "delta", text: "try 2;" },
    ]);
    const last = parts[2] as Extract<ToolExecutionStreamPart, { type: "result" }>;
    expect(last.result).toMatchObject({ success: true, data: "up", metadata: { retryAttempts: 2 } });
  });

  it("concurrent_batch streams through its inner executor", async () => {
    const parts = await all(
      new ConcurrentBatchToolExecutor(new SafeToolExecutor()).executeStream(makeRequest(keel())),
    );
    expect(parts.map((part) => (part.type === "delta" ? part.text : "result"))).toEqual([
      "k",
      "ee",
      "l",
      "result",
    ]);
  });
});

describe("executeToolCall", () => {
  it("runs a streaming tool through executeStream, sending each delta out through ctx.emitDelta", async () => {
    const request = makeRequest(keel());
    const executor = {
      execute: () => Promise.reject(new Error("execute must not be used for a streaming tool")),
      async *executeStream(): AsyncIterable<ToolExecutionStreamPart> {
        yield { type: "delta", text: "via " };
        yield { type: "delta", text: "stream" };
        yield {
          type: "result",
          result: { toolId: "spell", success: true, data: "via stream", metadata: {} },
        };
      },
    };
    const result = await executeToolCall(executor, request);
    expect(result.data).toBe("via stream");
    expect(request.deltas).toEqual(["via ", "stream"]);
  });

  it("fails the call when an executor's stream ends without a result", async () => {
    const executor = {
      execute: () => Promise.reject(new Error("unused")),
      async *executeStream(): AsyncIterable<ToolExecutionStreamPart> {
        yield { type: "delta", text: "only" };
      },
    };
    const result = await executeToolCall(executor, makeRequest(keel()));
    expect(result.success).toBe(false);
    expect(result.error).toContain("ended without a result");
  });

  it("gives the same events through execute and through executeStream (safe)", async () => {
    const viaExecute = makeRequest(keel());
    const direct = await new SafeToolExecutor().execute(viaExecute);
    const viaStream = makeRequest(keel());
    const streamed = await executeToolCall(new SafeToolExecutor(), viaStream);
    expect(streamed).toEqual(direct);
    expect(viaStream.deltas).toEqual(viaExecute.deltas);
  });
});
