import { describe, expect, it } from "vitest";
import type { ModelStreamPart } from "../contracts/language-model.js";
import { LLMConnectionError, LLMRateLimitError } from "../errors/error-classes.js";
import { CancelScope } from "./cancel-scope.js";
import { readModelStream, toToolCall } from "./read-model-stream.js";

async function* stream(parts: ModelStreamPart[]): AsyncGenerator<ModelStreamPart> {
  for (const part of parts) yield part;
}

function recordingSink() {
  const text: string[] = [];
  const reasoning: string[] = [];
  return {
    text,
    reasoning,
    sink: {
      onTextDelta: (delta: string) => text.push(delta),
      onReasoningDelta: (delta: string) => reasoning.push(delta),
    },
  };
}

async function read(parts: ModelStreamPart[], scope = new CancelScope()) {
  const recorder = recordingSink();
  const response = await readModelStream(stream(parts), recorder.sink, {
    scope: scope,
    fallbackModel: "fallback-model",
  });
  return { response, ...recorder };
}

describe("readModelStream", () => {
  it("sends text deltas to the sink and joins them, skipping empty ones", async () => {
    const { response, text } = await read([
      { type: "text-delta", text: "Hel" },
      { type: "text-delta", text: "" },
      { type: "text-delta", text: "lo" },
      { type: "usage", usage: { inputTokens: 5, outputTokens: 2 } },
      { type: "finish", stopReason: "end_turn", model: "m-2024" },
    ]);
    expect(text).toEqual(["Hel", "lo"]);
    expect(response).toEqual({
      text: "Hello",
      toolCalls: [],
      reasoning: [],
      usage: { inputTokens: 5, outputTokens: 2 },
      stopReason: "end_turn",
      model: "m-2024",
    });
  });

  it("uses the fallback model and stop reason unknown without a finish part", async () => {
    const { response } = await read([{ type: "text-delta", text: "x" }]);
    expect(response.model).toBe("fallback-model");
    expect(response.stopReason).toBe("unknown");
    expect(response.usage).toBeUndefined();
    const finished = await read([{ type: "finish", stopReason: "max_tokens" }]);
    expect(finished.response.model).toBe("fallback-model");
    expect(finished.response.stopReason).toBe("max_tokens");
  });

  it("assembles tool-call deltas by index, the name possibly split across deltas", async () => {
    const { response } = await read([
      { type: "tool-call-delta", index: 0, id: "call_a", name: "get_", argumentsDelta: "" },
      { type: "tool-call-delta", index: 1, id: "call_b", name: "add", argumentsDelta: '{"a":' },
      { type: "tool-call-delta", index: 0, name: "weather", argumentsDelta: '{"city"' },
      { type: "tool-call-delta", index: 1, argumentsDelta: " 2}" },
      { type: "tool-call-delta", index: 0, argumentsDelta: ': "Oslo"}' },
    ]);
    expect(response.toolCalls).toEqual([
      { id: "call_a", name: "get_weather", arguments: { city: "Oslo" }, rawArguments: '{"city": "Oslo"}' },
      { id: "call_b", name: "add", arguments: { a: 2 }, rawArguments: '{"a": 2}' },
    ]);
    expect(response.stopReason).toBe("tool_use");
  });

  it("skips unused delta indices and puts complete tool calls first", async () => {
    const { response } = await read([
      { type: "tool-call-delta", index: 2, id: "late", name: "b", argumentsDelta: "{}" },
      { type: "tool-call", id: "whole", name: "a", arguments: { x: 1 } },
      { type: "finish", stopReason: "end_turn" },
    ]);
    expect(response.toolCalls.map((call) => call.id)).toEqual(["whole", "late"]);
    expect(response.stopReason).toBe("end_turn");
  });

  it("takes complete tool calls with object or string arguments", async () => {
    const { response } = await read([
      { type: "tool-call", id: "c1", name: "add", arguments: { a: 1, b: 2 } },
      { type: "tool-call", id: "c2", name: "search", arguments: '{"q":"cats"}' },
      { type: "tool-call", id: "c3", name: "noop", arguments: "  " },
    ]);
    expect(response.toolCalls).toEqual([
      { id: "c1", name: "add", arguments: { a: 1, b: 2 } },
      { id: "c2", name: "search", arguments: { q: "cats" }, rawArguments: '{"q":"cats"}' },
      { id: "c3", name: "noop", arguments: {}, rawArguments: "  " },
    ]);
  });

  it("keeps malformed JSON as an argumentsError with empty arguments", async () => {
    const { response } = await read([{ type: "tool-call", id: "c1", name: "add", arguments: '{"a": 1' }]);
    const [call] = response.toolCalls;
    expect(call).toMatchObject({ id: "c1", name: "add", arguments: {}, rawArguments: '{"a": 1' });
    expect(call!.argumentsError).toMatch(/^the arguments are not valid JSON \(.+\)$/);
  });

  it("keeps JSON that is not an object as an argumentsError", () => {
    for (const input of ["[1, 2]", "42", '"text"', "null"]) {
      expect(toToolCall("c", "t", input)).toEqual({
        id: "c",
        name: "t",
        arguments: {},
        rawArguments: input,
        argumentsError: "the arguments are not a JSON object",
      });
    }
  });

  it("generates distinct ids for calls without one", () => {
    const first = toToolCall("", "t", {});
    const second = toToolCall("", "t", {});
    expect(first.id).toMatch(/^call_\d+$/);
    expect(second.id).toMatch(/^call_\d+$/);
    expect(first.id).not.toBe(second.id);
  });

  it("throws an error part as its typed error", async () => {
    const error = new LLMRateLimitError("429", { retryAfterMs: 100 });
    const recorder = recordingSink();
    await expect(
      readModelStream(
        stream([
          { type: "text-delta", text: "partial" },
          { type: "error", error, errorType: "rate_limit" },
          { type: "text-delta", text: "never" },
        ]),
        recorder.sink,
        { scope: new CancelScope(), fallbackModel: "m" },
      ),
    ).rejects.toBe(error);
    expect(recorder.text).toEqual(["partial"]);
  });

  it("turns a non-Keel exception from the iterator into an LLMConnectionError", async () => {
    const cause = new TypeError("socket hang up");
    async function* failing(): AsyncGenerator<ModelStreamPart> {
      yield { type: "text-delta", text: "a" };
      throw cause;
    }
    const failure = await readModelStream(failing(), recordingSink().sink, {
      scope: new CancelScope(),
      fallbackModel: "m",
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LLMConnectionError);
    expect((failure as LLMConnectionError).message).toBe("The model stream failed: socket hang up");
    expect((failure as LLMConnectionError).cause).toBe(cause);
    expect((failure as LLMConnectionError).retryable).toBe(true);

    async function* failingWithString(): AsyncGenerator<ModelStreamPart> {
      yield* [];
      throw "reset";
    }
    const second = await readModelStream(failingWithString(), recordingSink().sink, {
      scope: new CancelScope(),
      fallbackModel: "m",
    }).catch((error: unknown) => error);
    expect((second as Error).message).toBe("The model stream failed: reset");
  });

  it("stops reading when the run is cancelled and closes the stream", async () => {
    const scope = new CancelScope();
    const pulled: string[] = [];
    let closed = false;
    async function* parts(): AsyncGenerator<ModelStreamPart> {
      try {
        for (const text of ["one", "two", "three"]) {
          pulled.push(text);
          yield { type: "text-delta", text };
        }
      } finally {
        closed = true;
      }
    }
    const seen: string[] = [];
    const response = await readModelStream(
      parts(),
      {
        onTextDelta: (text) => {
          seen.push(text);
          if (text === "two") scope.cancel({ type: "cancelled" });
        },
      },
      { scope: scope, fallbackModel: "m" },
    );
    expect(seen).toEqual(["one", "two"]);
    expect(pulled).toEqual(["one", "two"]);
    expect(closed).toBe(true);
    expect(response.text).toBe("onetwo");
  });

  it("rethrows an iterator failure as it is once the run is cancelled", async () => {
    const scope = new CancelScope();
    const abortError = new DOMException("aborted", "AbortError");
    async function* parts(): AsyncGenerator<ModelStreamPart> {
      yield* [];
      scope.cancel({ type: "cancelled" });
      throw abortError;
    }
    await expect(
      readModelStream(parts(), recordingSink().sink, { scope: scope, fallbackModel: "m" }),
    ).rejects.toBe(abortError);
  });

  it("collects reasoning deltas into one reasoning part", async () => {
    const { response, reasoning, text } = await read([
      { type: "reasoning-delta", text: "Let me " },
      { type: "reasoning-delta", text: "think." },
      { type: "text-delta", text: "42" },
    ]);
    expect(reasoning).toEqual(["Let me ", "think."]);
    expect(text).toEqual(["42"]);
    expect(response.reasoning).toEqual([{ type: "reasoning", text: "Let me think." }]);
    expect(response.text).toBe("42");
  });

  it("keeps whole reasoning parts, which take precedence over deltas", async () => {
    const signed = { type: "reasoning" as const, text: "thought", signature: "sig" };
    const redacted = { type: "reasoning" as const, text: "", redactedData: "opaque" };
    const { response } = await read([
      { type: "reasoning-delta", text: "thought" },
      { type: "reasoning", reasoning: signed },
      { type: "reasoning", reasoning: redacted },
    ]);
    expect(response.reasoning).toEqual([signed, redacted]);
  });

  it("reads reasoning deltas without a sink callback", async () => {
    const response = await readModelStream(
      stream([{ type: "reasoning-delta", text: "hmm" }]),
      { onTextDelta: () => {} },
      { scope: new CancelScope(), fallbackModel: "m" },
    );
    expect(response.reasoning).toEqual([{ type: "reasoning", text: "hmm" }]);
  });
  it("closes the stream when a part throws; the part's error wins over a failing close", async () => {
    const error = new LLMRateLimitError("429", { retryAfterMs: 1 });
    let closed = 0;
    const parts: AsyncIterable<ModelStreamPart> = {
      [Symbol.asyncIterator]: () => ({
        next: () =>
          Promise.resolve({ value: { type: "error", error, errorType: "rate_limit" }, done: false }),
        return: () => {
          closed++;
          return Promise.reject(new Error("close failed"));
        },
      }),
    };
    await expect(
      readModelStream(parts, recordingSink().sink, { scope: new CancelScope(), fallbackModel: "m" }),
    ).rejects.toBe(error);
    expect(closed).toBe(1);
  });

  it("fails a cancelled read with the error its stream's close throws", async () => {
    const scope = new CancelScope();
    const closeError = new Error("close failed");
    const parts: AsyncIterable<ModelStreamPart> = {
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.resolve({ value: { type: "text-delta", text: "a" }, done: false }),
        return: () => {
          throw closeError;
        },
      }),
    };
    const sink = { onTextDelta: () => scope.cancel({ type: "cancelled" }) };
    await expect(readModelStream(parts, sink, { scope, fallbackModel: "m" })).rejects.toBe(closeError);
  });

  it("reads a synchronous iterable of parts as `for await` does", async () => {
    const parts = [
      { type: "text-delta", text: "sync" },
      { type: "finish", stopReason: "end_turn" },
    ] as unknown as AsyncIterable<ModelStreamPart>;
    const response = await readModelStream(parts, recordingSink().sink, {
      scope: new CancelScope(),
      fallbackModel: "m",
    });
    expect(response.text).toBe("sync");
    expect(response.stopReason).toBe("end_turn");
  });

  it("fails on an iterator result that is not an object, and on a thrown undefined", async () => {
    const notAnObject = {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve(42) }),
    } as unknown as AsyncIterable<ModelStreamPart>;
    const first = await readModelStream(notAnObject, recordingSink().sink, {
      scope: new CancelScope(),
      fallbackModel: "m",
    }).catch((error: unknown) => error);
    expect(first).toBeInstanceOf(LLMConnectionError);
    expect((first as Error).message).toMatch(/iterator result 42 is not an object/);

    const undefinedError = await readModelStream(
      stream([{ type: "error", error: undefined as unknown as LLMRateLimitError, errorType: "unknown" }]),
      recordingSink().sink,
      { scope: new CancelScope(), fallbackModel: "m" },
    ).catch((error: unknown) => error);
    expect((undefinedError as Error).message).toBe("The model stream failed: undefined");
  });

  it("starts every read afresh, whatever the reads before it left", async () => {
    const failing = readModelStream(
      stream([
        { type: "text-delta", text: "left " },
        { type: "tool-call-delta", index: 0, id: "c1", name: "t", argumentsDelta: "{" },
        { type: "error", error: new LLMRateLimitError("429", { retryAfterMs: 1 }), errorType: "rate_limit" },
      ]),
      recordingSink().sink,
      { scope: new CancelScope(), fallbackModel: "m" },
    );
    const concurrent = read([{ type: "text-delta", text: "other" }]);
    await expect(failing).rejects.toBeInstanceOf(LLMRateLimitError);
    expect((await concurrent).response.text).toBe("other");
    const { response } = await read([{ type: "text-delta", text: "fresh" }]);
    expect(response).toEqual({
      text: "fresh",
      toolCalls: [],
      reasoning: [],
      usage: undefined,
      stopReason: "unknown",
      model: "fallback-model",
    });
  });
});
