import { describe, expect, it } from "vitest";
import type { Message } from "../contracts/message.js";
import type { RunRequest } from "../contracts/run-types.js";
import type { SessionArtifact, SessionManager } from "../sessions/session-manager.js";
import type { ContextAssemblyInput } from "./context-assembler.js";
import { TruncatingContextAssembler } from "./truncating-context-assembler.js";

function assemblyInput(messages: Message[], artifacts: SessionArtifact[] = []): ContextAssemblyInput {
  const sessionManager = {
    loadMessages: async (sessionId: string) => (sessionId === "s1" ? messages : []),
    listArtifacts: async (sessionId: string) => (sessionId === "s1" ? artifacts : []),
  } as unknown as SessionManager;
  return {
    request: {} as RunRequest,
    sessionId: "s1",
    sessionState: {},
    sessionManager,
    countTokens: (text) => text.length,
  };
}

const users = (count: number): Message[] =>
  Array.from({ length: count }, (_, index) => ({ role: "user", content: `m${index}` }));

const artifacts = (count: number): SessionArtifact[] =>
  Array.from({ length: count }, (_, index) => ({
    name: `a${index}`,
    kind: "generic",
    payload: index,
    metadata: {},
  }));

// 0 u1, 1 assistant calling c1+c2, 2-3 their results, 4 assistant answer, 5 u2
const toolConversation: Message[] = [
  { role: "user", content: "u1" },
  {
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "c1", name: "f", arguments: {} },
      { id: "c2", name: "g", arguments: {} },
    ],
  },
  { role: "tool", toolCallId: "c1", toolName: "f", content: "r1" },
  { role: "tool", toolCallId: "c2", toolName: "g", content: "r2" },
  { role: "assistant", content: "done" },
  { role: "user", content: "u2" },
];

describe("TruncatingContextAssembler", () => {
  it("keeps the newest 20 messages and 10 artifacts by default, with a summary message", async () => {
    const messages = users(25);
    const result = await new TruncatingContextAssembler().assemble(assemblyInput(messages, artifacts(12)));
    expect(result.transcript).toEqual([
      { role: "system", content: "Summary: omitted 5 older message(s)" },
      ...messages.slice(5),
    ]);
    expect(result.sessionArtifacts.map((artifact) => artifact.name)).toEqual([
      "a2",
      "a3",
      "a4",
      "a5",
      "a6",
      "a7",
      "a8",
      "a9",
      "a10",
      "a11",
    ]);
    // m5..m9 are 2 characters, m10..m24 are 3.
    expect(result.metadata).toEqual({
      assembler: "truncating",
      strategy: "truncate",
      omittedMessages: 5,
      omittedArtifacts: 2,
      keptTokens: 5 * 2 + 15 * 3,
    });
  });

  it("adds no summary when nothing was dropped", async () => {
    const messages = users(3);
    const result = await new TruncatingContextAssembler().assemble(assemblyInput(messages, artifacts(2)));
    expect(result.transcript).toEqual(messages);
    expect(result.metadata).toEqual({
      assembler: "truncating",
      strategy: "truncate",
      omittedMessages: 0,
      omittedArtifacts: 0,
      keptTokens: 6,
    });
  });

  it("leaves the summary out when include_summary_message is off", async () => {
    const messages = users(5);
    const assembler = new TruncatingContextAssembler({ maxMessages: 2, includeSummaryMessage: false });
    const result = await assembler.assemble(assemblyInput(messages));
    expect(result.transcript).toEqual(messages.slice(3));
    expect(result.metadata.omittedMessages).toBe(3);
  });

  it("also bounds the window by tokens when max_tokens is set", async () => {
    const messages: Message[] = [
      { role: "user", content: "x".repeat(10) },
      { role: "assistant", content: "y".repeat(6) },
      { role: "user", content: "z".repeat(4) },
    ];
    const result = await new TruncatingContextAssembler({ maxTokens: 10 }).assemble(assemblyInput(messages));
    expect(result.transcript).toEqual([
      { role: "system", content: "Summary: omitted 1 older message(s)" },
      messages[1],
      messages[2],
    ]);
    expect(result.metadata.keptTokens).toBe(10);
  });

  it("drops tool results whose assistant call fell out of the window", async () => {
    const result = await new TruncatingContextAssembler({ maxMessages: 4 }).assemble(
      assemblyInput(toolConversation),
    );
    expect(result.transcript).toEqual([
      { role: "system", content: "Summary: omitted 4 older message(s)" },
      { role: "assistant", content: "done" },
      { role: "user", content: "u2" },
    ]);
    expect(result.metadata).toEqual({
      assembler: "truncating",
      strategy: "truncate",
      omittedMessages: 4,
      omittedArtifacts: 0,
      keptTokens: 6,
    });
  });

  it("keeps an assistant call together with its results when both fit", async () => {
    const result = await new TruncatingContextAssembler({ maxMessages: 5 }).assemble(
      assemblyInput(toolConversation),
    );
    expect(result.transcript).toEqual([
      { role: "system", content: "Summary: omitted 1 older message(s)" },
      ...toolConversation.slice(1),
    ]);
  });

  it("keeps no messages or artifacts when both limits are zero", async () => {
    const assembler = new TruncatingContextAssembler({ maxMessages: 0, maxArtifacts: 0 });
    const result = await assembler.assemble(assemblyInput(users(2), artifacts(1)));
    expect(result.transcript).toEqual([{ role: "system", content: "Summary: omitted 2 older message(s)" }]);
    expect(result.sessionArtifacts).toEqual([]);
  });
});
