import { describe, expect, it } from "vitest";
import type { Message } from "../contracts/message.js";
import type { RunRequest } from "../contracts/run-types.js";
import type { SessionArtifact, SessionManager } from "../sessions/session-manager.js";
import type { ContextAssemblyInput } from "./context-assembler.js";
import { PassthroughContextAssembler } from "./passthrough-context-assembler.js";

function assemblyInput(messages: Message[], artifacts: SessionArtifact[]): ContextAssemblyInput {
  const sessionManager = {
    loadMessages: async (sessionId: string) => (sessionId === "s1" ? messages : []),
    listArtifacts: async (sessionId: string) => (sessionId === "s1" ? artifacts : []),
  } as unknown as SessionManager;
  return {
    request: {} as RunRequest,
    sessionId: "s1",
    sessionState: {},
    sessionManager,
    countTokens: () => 1,
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

describe("PassthroughContextAssembler", () => {
  it("returns the whole stored transcript and every artifact", async () => {
    const messages = users(30);
    const stored = artifacts(12);
    const result = await new PassthroughContextAssembler().assemble(assemblyInput(messages, stored));
    expect(result).toEqual({
      transcript: messages,
      sessionArtifacts: stored,
      metadata: {
        assembler: "passthrough",
        strategy: "passthrough",
        omittedMessages: 0,
        omittedArtifacts: 0,
      },
    });
  });
});
