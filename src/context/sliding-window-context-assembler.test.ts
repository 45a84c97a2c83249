import { describe, expect, it } from "vitest";
import type { Message } from "../contracts/message.js";
import type { RunRequest } from "../contracts/run-types.js";
import type { SessionArtifact, SessionManager } from "../sessions/session-manager.js";
import type { ContextAssemblyInput } from "./context-assembler.js";
import { SlidingWindowContextAssembler } from "./sliding-window-context-assembler.js";

function assemblyInput(messages: Message[], artifacts: SessionArtifact[] = []): ContextAssemblyInput {
  const sessionManager = {
    loadMessages: async () => messages,
    listArtifacts: async () => artifacts,
  } as unknown as SessionManager;
  return {
    request: {} as RunRequest,
    sessionId: "s1",
    sessionState: {},
    sessionManager,
    countTokens: (text) => text.length,
  };
}

/** A user message of exactly `tokens` tokens under the length counter. */
const sized = (label: string, tokens: number): Message => ({
  role: "user",
  content: label.padEnd(tokens, "."),
});

const call = (id: string): Message => ({
  role: "assistant",
  content: "",
  toolCalls: [{ id, name: "t", arguments: {} }],
});
// "t" + "{}" = 3 tokens for the call, the result's text for the result
const result = (id: string, content: string): Message => ({
  role: "tool",
  toolCallId: id,
  toolName: "t",
  content,
});

describe("SlidingWindowContextAssembler", () => {
  it("keeps the newest messages within max_input_tokens − reserve_for_response", async () => {
    const messages = [sized("a", 40), sized("b", 30), sized("c", 50), sized("d", 20)];
    const assembler = new SlidingWindowContextAssembler({ maxInputTokens: 120, reserveForResponse: 40 });
    expect(assembler.budget).toBe(80);
    const assembled = await assembler.assemble(assemblyInput(messages));
    expect(assembled.transcript).toEqual([messages[2], messages[3]]);
    expect(assembled.metadata).toEqual({
      assembler: "sliding_window",
      strategy: "sliding_window",
      budgetInputTokens: 80,
      keptTokens: 70,
      omittedMessages: 2,
      omittedTokens: 70,
      omittedArtifacts: 0,
    });
  });

  it("defaults to a 6000-token budget and 10 artifacts", async () => {
    const messages = [sized("old", 5000), sized("mid", 3000), sized("new", 2500)];
    const artifacts = Array.from({ length: 11 }, (_, index) => ({
      name: `a${index}`,
      kind: "generic",
      payload: null,
      metadata: {},
    }));
    const assembled = await new SlidingWindowContextAssembler().assemble(assemblyInput(messages, artifacts));
    expect(assembled.transcript).toEqual([messages[1], messages[2]]);
    expect(assembled.sessionArtifacts).toEqual(artifacts.slice(1));
    expect(assembled.metadata.omittedArtifacts).toBe(1);
  });

  it("counts tool call arguments and drops results of calls that fell out", async () => {
    const messages = [sized("q", 10), call("c1"), result("c1", "12345"), sized("next", 5)];
    // budget 10: "next" (5) + the result (5) fit, the call (3) does not, so its result is an orphan
    const assembled = await new SlidingWindowContextAssembler({
      maxInputTokens: 10,
      reserveForResponse: 0,
    }).assemble(assemblyInput(messages));
    expect(assembled.transcript).toEqual([messages[3]]);
    expect(assembled.metadata).toMatchObject({ keptTokens: 5, omittedMessages: 3, omittedTokens: 18 });
  });
});
