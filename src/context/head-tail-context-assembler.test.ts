import { describe, expect, it } from "vitest";
import type { Message } from "../contracts/message.js";
import type { RunRequest } from "../contracts/run-types.js";
import type { SessionArtifact, SessionManager } from "../sessions/session-manager.js";
import type { ContextAssemblyInput } from "./context-assembler.js";
import { HeadTailContextAssembler } from "./head-tail-context-assembler.js";

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

describe("HeadTailContextAssembler", () => {
  it("keeps the first head_messages and then the newest that fit the rest of the budget", async () => {
    const messages = [
      sized("h1", 10),
      sized("h2", 10),
      sized("h3", 10),
      sized("x1", 30),
      sized("x2", 30),
      sized("t1", 20),
      sized("t2", 20),
    ];
    const assembler = new HeadTailContextAssembler({ maxInputTokens: 100, reserveForResponse: 20 });
    const assembled = await assembler.assemble(assemblyInput(messages));
    expect(assembled.transcript).toEqual([messages[0], messages[1], messages[2], messages[5], messages[6]]);
    expect(assembled.metadata).toEqual({
      assembler: "head_tail",
      strategy: "head_tail",
      budgetInputTokens: 80,
      headMessages: 3,
      keptTokens: 70,
      omittedMessages: 2,
      omittedTokens: 60,
      omittedArtifacts: 0,
    });
  });

  it("returns the transcript unchanged when everything fits", async () => {
    const messages = [sized("a", 1), sized("b", 1), sized("c", 1), sized("d", 1), sized("e", 1)];
    const assembled = await new HeadTailContextAssembler().assemble(assemblyInput(messages));
    expect(assembled.transcript).toEqual(messages);
    expect(assembled.metadata).toMatchObject({ headMessages: 3, omittedMessages: 0, omittedTokens: 0 });
  });

  it("grows the head to include the results of a head assistant's tool calls", async () => {
    const messages = [sized("task", 5), call("c1"), result("c1", "r"), sized("x", 50), sized("tail", 5)];
    const assembler = new HeadTailContextAssembler({
      maxInputTokens: 20,
      reserveForResponse: 0,
      headMessages: 2,
    });
    const assembled = await assembler.assemble(assemblyInput(messages));
    expect(assembled.transcript).toEqual([messages[0], messages[1], messages[2], messages[4]]);
    expect(assembled.metadata).toMatchObject({ headMessages: 3, keptTokens: 14, omittedMessages: 1 });
  });

  it("stops the head before an assistant whose results do not fit", async () => {
    const messages = [sized("task", 5), call("c1"), result("c1", "r".repeat(40)), sized("tail", 5)];
    const assembler = new HeadTailContextAssembler({
      maxInputTokens: 20,
      reserveForResponse: 0,
      headMessages: 2,
    });
    const assembled = await assembler.assemble(assemblyInput(messages));
    // The orphaned result never leads the tail: the tail's window stops at it (too big) anyway.
    expect(assembled.transcript).toEqual([messages[0], messages[3]]);
    expect(assembled.metadata).toMatchObject({ headMessages: 1, keptTokens: 10, omittedMessages: 2 });
  });

  it("drops a tail-leading tool result whose call is outside the window", async () => {
    const messages = [sized("task", 5), sized("mid", 40), call("c1"), result("c1", "ab"), sized("end", 3)];
    const assembler = new HeadTailContextAssembler({
      maxInputTokens: 10,
      reserveForResponse: 0,
      headMessages: 1,
    });
    const assembled = await assembler.assemble(assemblyInput(messages));
    // budget 10: head 5, then "end" (3) and the result (2) fit but the call (3) does not
    expect(assembled.transcript).toEqual([messages[0], messages[4]]);
    expect(assembled.metadata).toMatchObject({ keptTokens: 8, omittedMessages: 3 });
  });
});
