import { afterEach, describe, expect, it, vi } from "vitest";
import {
  isLanguageModel,
  type ModelRequest,
  type ModelStreamPart,
} from "../../../contracts/language-model.js";
import type { Message } from "../../../contracts/message.js";
import {
  ConfigError,
  LLMConnectionError,
  LLMRateLimitError,
  LLMResponseError,
} from "../../../errors/error-classes.js";
import { ScriptedModel, scriptedModel } from "./scripted-model.js";

async function collect(parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const collected: ModelStreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: "user", content: "hi" }], options: {}, ...overrides };
}

/** A request whose transcript already holds `turns` assistant answers, each after a user message. */
function afterTurns(turns: number, overrides: Partial<ModelRequest> = {}): ModelRequest {
  const messages: Message[] = [{ role: "user", content: "hi" }];
  for (let turn = 1; turn <= turns; turn++)
    messages.push({ role: "assistant", content: `answer ${turn}` }, { role: "user", content: "more" });
  return request({ messages, ...overrides });
}

const finish = (stopReason: "end_turn" | "tool_use", model = "mock-scripted") => ({
  type: "finish",
  stopReason,
  model,
});

describe("ScriptedModel", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is a mock language model", () => {
    const model = scriptedModel([{ text: "x" }]);
    expect(isLanguageModel(model)).toBe(true);
    expect(model.provider).toBe("mock");
    expect(model.modelId).toBe("mock-scripted");
    expect(new ScriptedModel([], { modelId: "custom" }).modelId).toBe("custom");
    expect(model.countTokens("12345678")).toBe(2);
  });

  it("answers a text turn as one delta", async () => {
    const model = scriptedModel([{ text: "Hello there" }]);
    expect(await collect(model.stream(request()))).toEqual([
      { type: "text-delta", text: "Hello there" },
      finish("end_turn"),
    ]);
  });

  it("streams deltas one by one and uses the model id in finish", async () => {
    const model = scriptedModel([{ deltas: ["The ", "answer ", "is 42."] }], { modelId: "m-1" });
    expect(await collect(model.stream(request()))).toEqual([
      { type: "text-delta", text: "The " },
      { type: "text-delta", text: "answer " },
      { type: "text-delta", text: "is 42." },
      finish("end_turn", "m-1"),
    ]);
  });

  it("sends reasoning before the text", async () => {
    const model = scriptedModel([{ reasoning: "Let me think", text: "Done" }]);
    expect(await collect(model.stream(request()))).toEqual([
      { type: "reasoning", reasoning: { type: "reasoning", text: "Let me think" } },
      { type: "text-delta", text: "Done" },
      finish("end_turn"),
    ]);
  });

  it("issues tool calls with ids call_<turn>_<position> unless given", async () => {
    const model = scriptedModel([
      { text: "first" },
      {
        toolCalls: [
          { name: "add", arguments: { a: 2, b: 40 } },
          { name: "search" },
          { id: "mine", name: "raw", rawArguments: '{"q": ' },
        ],
      },
    ]);
    expect(await collect(model.stream(afterTurns(1)))).toEqual([
      { type: "tool-call", id: "call_2_1", name: "add", arguments: { a: 2, b: 40 } },
      { type: "tool-call", id: "call_2_2", name: "search", arguments: {} },
      { type: "tool-call", id: "mine", name: "raw", arguments: '{"q": ' },
      finish("tool_use"),
    ]);
  });

  it("reports usage given in snake_case or camelCase, defaulting missing counts to 0", async () => {
    const model = new ScriptedModel([
      { text: "a", usage: { input_tokens: 10, output_tokens: 3, cache_read_tokens: 4 } },
      { text: "b", usage: { inputTokens: 7, reasoningTokens: 2 } },
    ]);
    expect((await collect(model.stream(request())))[1]).toEqual({
      type: "usage",
      usage: { inputTokens: 10, outputTokens: 3, cacheReadTokens: 4 },
    });
    expect((await collect(model.stream(afterTurns(1))))[1]).toEqual({
      type: "usage",
      usage: { inputTokens: 7, outputTokens: 0, reasoningTokens: 2 },
    });
  });

  it("fails error turns with typed errors and their errorType", async () => {
    const model = new ScriptedModel([
      { error: { type: "rate_limit", message: "429", retry_after_ms: 3000 } },
      { error: { type: "connection" } },
      { error: { type: "response", message: "bad" } },
      { error: { type: "unknown" } },
    ]);
    const rate = await collect(model.stream(request()));
    expect(rate).toHaveLength(1);
    expect(rate[0]).toMatchObject({ type: "error", errorType: "rate_limit" });
    const rateError = (rate[0] as unknown as { error: LLMRateLimitError }).error;
    expect(rateError).toBeInstanceOf(LLMRateLimitError);
    expect(rateError.message).toBe("429");
    expect(rateError.retryAfterMs).toBe(3000);

    const connection = await collect(model.stream(request()));
    expect(connection[0]).toMatchObject({ type: "error", errorType: "connection" });
    expect((connection[0] as { error: unknown }).error).toBeInstanceOf(LLMConnectionError);
    const response = await collect(model.stream(request()));
    expect(response[0]).toMatchObject({ type: "error", errorType: "response" });
    expect((response[0] as { error: Error }).error.message).toBe("bad");
    const unknown = await collect(model.stream(request()));
    expect(unknown[0]).toMatchObject({ type: "error", errorType: "unknown" });
    expect((unknown[0] as { error: unknown }).error).toBeInstanceOf(LLMResponseError);
  });

  it("answers after its delay", async () => {
    vi.useFakeTimers();
    const model = scriptedModel([{ text: "late", delayMs: 500 }]);
    const parts: ModelStreamPart[] = [];
    const done = (async () => {
      for await (const part of model.stream(request())) parts.push(part);
    })();
    await vi.advanceTimersByTimeAsync(499);
    expect(parts).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await done;
    expect(parts).toEqual([{ type: "text-delta", text: "late" }, finish("end_turn")]);
  });

  it("stops waiting when the request's signal aborts", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const model = scriptedModel([{ text: "never", delayMs: 10_000 }]);
    const outcome = collect(model.stream(request({ signal: controller.signal }))).then(
      () => "resolved",
      (error: unknown) => error,
    );
    await vi.advanceTimersByTimeAsync(100);
    const reason = new Error("user cancelled");
    controller.abort(reason);
    expect(await outcome).toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("fails at once when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort("gone");
    const model = scriptedModel([{ text: "never", delayMs: 10_000 }]);
    await expect(collect(model.stream(request({ signal: controller.signal })))).rejects.toBe("gone");
  });

  it("fails with an LLMResponseError and a hint once the script is exhausted", async () => {
    const model = scriptedModel([{ text: "only" }]);
    await collect(model.stream(request()));
    const parts = await collect(model.stream(afterTurns(1)));
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ type: "error", errorType: "response" });
    const error = (parts[0] as unknown as { error: LLMResponseError }).error;
    expect(error).toBeInstanceOf(LLMResponseError);
    expect(error.message).toBe(
      "The scripted model has no turn 2 (its script has 1; the transcript already holds 1 assistant turn)",
    );
    expect(error.hint).toBe(
      "Add a turn to the script, start a new session, or pass { whenExhausted: 'repeat-last' }",
    );
    expect(model.callCount).toBe(2);
  });

  it("repeats the last turn with whenExhausted: repeat-last", async () => {
    const model = scriptedModel([{ text: "one" }, { toolCalls: [{ name: "t" }] }], {
      whenExhausted: "repeat-last",
    });
    expect(await collect(model.stream(afterTurns(2)))).toEqual([
      { type: "tool-call", id: "call_3_1", name: "t", arguments: {} },
      finish("tool_use"),
    ]);
    expect((await collect(model.stream(afterTurns(5))))[0]).toMatchObject({ type: "tool-call", name: "t" });
  });

  it("gives function steps the request and the index of their turn", async () => {
    const seen: [ModelRequest, number][] = [];
    const model = scriptedModel([
      { text: "first" },
      (req, index) => {
        seen.push([req, index]);
        return { text: `you said ${(req.messages.at(-1) as { content: string }).content}` };
      },
    ]);
    await collect(model.stream(request()));
    const controller = new AbortController();
    const second = request({
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "first" },
        { role: "user", content: "again" },
      ],
      signal: controller.signal,
    });
    expect(await collect(model.stream(second))).toEqual([
      { type: "text-delta", text: "you said again" },
      finish("end_turn"),
    ]);
    expect(seen).toEqual([[second, 1]]);
    expect(seen[0]![0]).toBe(second);
  });

  it("answers with the turn after the assistant turns the transcript holds, whoever made the calls before", async () => {
    const script = [{ toolCalls: [{ name: "add" }] }, { text: "two" }, { text: "three" }];
    // A fresh model (another process) given a transcript with one answer goes on with the second turn.
    expect((await collect(new ScriptedModel(script).stream(afterTurns(1))))[0]).toEqual({
      type: "text-delta",
      text: "two",
    });
    // One model used by two sessions: each starts at the first turn.
    const shared = new ScriptedModel(script);
    expect((await collect(shared.stream(request())))[0]).toMatchObject({ type: "tool-call" });
    expect((await collect(shared.stream(request())))[0]).toMatchObject({ type: "tool-call" });
    expect((await collect(shared.stream(afterTurns(2))))[0]).toEqual({ type: "text-delta", text: "three" });
    expect(shared.callCount).toBe(3);
  });

  it("serves an error turn once: the call that retries gets the turn after it", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: "add" }] },
      { error: { type: "rate_limit" } },
      { error: { type: "connection" } },
      { text: "done" },
      { text: "more" },
    ]);
    expect((await collect(model.stream(afterTurns(1))))[0]).toMatchObject({ errorType: "rate_limit" });
    expect((await collect(model.stream(afterTurns(1))))[0]).toMatchObject({ errorType: "connection" });
    expect((await collect(model.stream(afterTurns(1))))[0]).toEqual({ type: "text-delta", text: "done" });
    // Answered: the next session at the same point meets the errors again, as a new process would.
    expect((await collect(model.stream(afterTurns(1))))[0]).toMatchObject({ errorType: "rate_limit" });
    expect((await collect(model.stream(afterTurns(2))))[0]).toEqual({ type: "text-delta", text: "more" });
    // A tool call's default id numbers its place in the script, error turns included.
    const retried = new ScriptedModel([{ error: { type: "connection" } }, { toolCalls: [{ name: "t" }] }]);
    await collect(retried.stream(request()));
    expect((await collect(retried.stream(request())))[0]).toMatchObject({ id: "call_2_1", name: "t" });
  });

  it("records every request, with the messages as they were at the call", async () => {
    const model = scriptedModel([{ text: "a" }, { text: "b" }]);
    const transcript: Message[] = [{ role: "user", content: "one" }];
    const tools = [{ name: "t", description: "d", inputSchema: { type: "object" } }];
    const controller = new AbortController();
    await collect(
      model.stream({
        messages: transcript,
        options: { temperature: 0 },
        tools,
        system: "be brief",
        clientKwargs: { k: 1 },
        signal: controller.signal,
      }),
    );
    transcript.push({ role: "assistant", content: "a" }, { role: "user", content: "two" });
    await collect(model.stream({ messages: transcript, options: {} }));
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]).toEqual({
      messages: [{ role: "user", content: "one" }],
      options: { temperature: 0 },
      tools,
      system: "be brief",
      clientKwargs: { k: 1 },
    });
    expect(model.requests[1]!.messages).toHaveLength(3);
    expect(model.callCount).toBe(2);
  });

  it("refuses an invalid script entry at construction", () => {
    expect(() => new ScriptedModel([{ text: "ok" }, { tool_calls: [{ name: "" }] }])).toThrow(ConfigError);
    expect(() => new ScriptedModel([{ text: "ok" }, { bogus: true }])).toThrow(
      'llm.script[1]: Unrecognized key: "bogus"',
    );
  });
});
