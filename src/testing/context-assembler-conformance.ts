import { randomUUID } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import type { ContextAssembler, ContextAssemblyInput } from "../context/context-assembler.js";
import { approximateTokens } from "../contracts/language-model.js";
import { type Message, messageText } from "../contracts/message.js";
import type { RunRequest } from "../contracts/run-types.js";
import { InMemorySessionManager } from "../sessions/in-memory-session-manager.js";
import type { SessionArtifact, SessionManager } from "../sessions/session-manager.js";

/** The bounds the assembler under test was built with; absent ones mean it keeps everything of that kind. */
export interface ContextAssemblerBounds {
  /** Most stored messages kept. */
  maxMessages?: number;
  /** Most approximate tokens of kept stored messages (text plus tool-call names and arguments). */
  maxTokens?: number;
  /** Most artifacts kept. */
  maxArtifacts?: number;
}

/** Options of {@link describeContextAssemblerConformance}. */
export interface ContextAssemblerConformanceOptions {
  /**
   * What the assembler is configured to keep at most. The suite's long session is 160 messages of about 15 tokens
   * and 15 artifacts; bounds must leave room for its newest turn (4 messages, 60 tokens) and for a short session
   * of 2 turns. Without bounds the assembler must keep the whole session.
   */
  bounds?: ContextAssemblerBounds;
  /** The session store the suite fills (default: a fresh `InMemorySessionManager` per test). */
  sessionManager?: () => Promise<SessionManager> | SessionManager;
}

/** The suite's token counter: the model seam's approximation, four characters a token. */
const countTokens = (text: string): number => approximateTokens(text);

/** A stored message's approximate tokens, as token-bounded assemblers count them. */
function tokensOf(message: Message): number {
  let tokens = countTokens(messageText(message));
  if (message.role === "assistant") {
    for (const call of message.toolCalls ?? [])
      tokens += countTokens(call.name + JSON.stringify(call.arguments));
  }
  return tokens;
}

/** One turn: the user asks, the assistant calls a tool, the tool answers, the assistant answers. */
function turn(index: number): Message[] {
  const callId = `call_${index}`;
  return [
    { role: "user", content: `Question ${index}: how many widgets are in crate ${index}?` },
    {
      role: "assistant",
      content: "",
      toolCalls: [{ id: callId, name: "count_widgets", arguments: { crate: index } }],
    },
    {
      role: "tool",
      toolCallId: callId,
      toolName: "count_widgets",
      content: `crate ${index} has ${index * 3}`,
    },
    { role: "assistant", content: `Crate ${index} holds ${index * 3} widgets, as counted just now.` },
  ];
}

function artifact(index: number): SessionArtifact {
  return { name: `report-${index}.txt`, kind: "file", payload: { index }, metadata: { turn: index } };
}

/** Whether `part` appears in `whole` in the same order (each element deep-equal). */
function isSubsequence(part: readonly unknown[], whole: readonly unknown[]): boolean {
  let at = 0;
  for (const item of part) {
    const text = JSON.stringify(item);
    while (at < whole.length && JSON.stringify(whole[at]) !== text) at++;
    if (at === whole.length) return false;
    at++;
  }
  return true;
}

/** Messages the assembler took from the store: everything but the system messages it may add (summaries). */
function storedOnes(transcript: readonly Message[]): Message[] {
  return transcript.filter((message) => message.role !== "system");
}

/**
 * Register the vitest suite every `ContextAssembler` must pass: the result's shape, an empty and a short session,
 * order kept, no tool result without its call, the newest turn kept, its `bounds` respected on a long session,
 * sessions kept apart, and nothing it was given changed. `factory` makes a fresh assembler per test.
 *
 * @example
 * describeContextAssemblerConformance("summarising", () => new SummarisingAssembler({ maxMessages: 20 }), {
 *   bounds: { maxMessages: 20 },
 * });
 */
export function describeContextAssemblerConformance(
  name: string,
  factory: () => Promise<ContextAssembler> | ContextAssembler,
  options: ContextAssemblerConformanceOptions = {},
): void {
  const bounds = options.bounds ?? {};
  describe(`ContextAssembler conformance: ${name}`, () => {
    let assembler: ContextAssembler;
    let sessions: SessionManager;

    beforeEach(async () => {
      assembler = await factory();
      sessions = (await options.sessionManager?.()) ?? new InMemorySessionManager();
    });

    async function fill(turns: number, artifacts: number): Promise<{ sessionId: string; stored: Message[] }> {
      const sessionId = `session-${randomUUID()}`;
      const stored: Message[] = [];
      for (let index = 1; index <= turns; index++) stored.push(...turn(index));
      if (stored.length > 0) await sessions.appendMessages(sessionId, stored);
      for (let index = 1; index <= artifacts; index++)
        await sessions.saveArtifact(sessionId, artifact(index));
      return { sessionId, stored };
    }

    function input(sessionId: string, sessionState: Record<string, unknown> = {}): ContextAssemblyInput {
      const request: RunRequest = { agentId: "conformance-agent", sessionId, inputText: "And crate 99?" };
      return { request, sessionId, sessionState, sessionManager: sessions, countTokens };
    }

    it("returns a transcript, session artifacts and serialisable metadata", async () => {
      const { sessionId } = await fill(1, 1);
      const result = await assembler.assemble(input(sessionId));
      expect(Array.isArray(result.transcript)).toBe(true);
      expect(Array.isArray(result.sessionArtifacts)).toBe(true);
      expect(typeof result.metadata).toBe("object");
      expect(JSON.parse(JSON.stringify(result.metadata))).toEqual(result.metadata);
    });

    it("starts an empty session with no stored messages and no artifacts", async () => {
      const result = await assembler.assemble(input(`session-${randomUUID()}`));
      expect(storedOnes(result.transcript)).toEqual([]);
      expect(result.sessionArtifacts).toEqual([]);
    });

    it("keeps a short session whole, in order, with its artifacts", async () => {
      const { sessionId, stored } = await fill(2, 2);
      const result = await assembler.assemble(input(sessionId));
      expect(storedOnes(result.transcript)).toEqual(stored);
      // Both artifacts, unless the assembler is bounded to fewer.
      expect(result.sessionArtifacts).toHaveLength(Math.min(2, bounds.maxArtifacts ?? 2));
      expect(isSubsequence(result.sessionArtifacts, [artifact(1), artifact(2)])).toBe(true);
    });

    it("changes nothing it was given: the stored session, the session state or the request", async () => {
      const { sessionId } = await fill(40, 15);
      const state = { counter: 1, nested: { list: [1, 2] } };
      const given = input(sessionId, state);
      const before = structuredClone({
        messages: await sessions.loadMessages(sessionId),
        artifacts: await sessions.listArtifacts(sessionId),
        state,
        request: given.request,
      });
      await assembler.assemble(given);
      expect({
        messages: await sessions.loadMessages(sessionId),
        artifacts: await sessions.listArtifacts(sessionId),
        state,
        request: given.request,
      }).toEqual(before);
    });

    it("takes only the run's own session", async () => {
      await fill(3, 2);
      const { sessionId, stored } = await fill(1, 0);
      const result = await assembler.assemble(input(sessionId));
      expect(storedOnes(result.transcript)).toEqual(stored);
      expect(result.sessionArtifacts).toEqual([]);
    });

    describe("on a long session", () => {
      let stored: Message[];
      let kept: Message[];
      let artifacts: SessionArtifact[];

      beforeEach(async () => {
        const filled = await fill(40, 15);
        stored = filled.stored;
        const result = await assembler.assemble(input(filled.sessionId));
        kept = storedOnes(result.transcript);
        artifacts = result.sessionArtifacts;
      });

      it("keeps stored messages in their order, adding none of its own but system messages", () => {
        expect(isSubsequence(kept, stored)).toBe(true);
      });

      it("keeps the newest turn, the latest user message included", () => {
        expect(kept.slice(-4)).toEqual(stored.slice(-4));
      });

      it("keeps no tool result whose assistant tool call it left out", () => {
        const calls = new Set<string>();
        for (const message of kept) {
          if (message.role === "assistant") for (const call of message.toolCalls ?? []) calls.add(call.id);
          if (message.role === "tool") expect(calls.has(message.toolCallId)).toBe(true);
        }
      });

      it("keeps only artifacts of the session, in their order", () => {
        expect(
          isSubsequence(
            artifacts,
            Array.from({ length: 15 }, (_, index) => artifact(index + 1)),
          ),
        ).toBe(true);
      });

      const { maxMessages, maxTokens, maxArtifacts } = bounds;
      if (maxMessages === undefined && maxTokens === undefined) {
        it("keeps every message, having no bound", () => {
          expect(kept).toEqual(stored);
        });
      }
      if (maxMessages !== undefined) {
        it(`keeps at most ${maxMessages} stored messages`, () => {
          expect(kept.length).toBeLessThanOrEqual(maxMessages);
        });
      }
      if (maxTokens !== undefined) {
        it(`keeps stored messages of at most ${maxTokens} tokens`, () => {
          expect(kept.reduce((total, message) => total + tokensOf(message), 0)).toBeLessThanOrEqual(
            maxTokens,
          );
        });
      }
      if (maxArtifacts === undefined) {
        it("keeps every artifact, having no bound", () => {
          expect(artifacts).toHaveLength(15);
        });
      } else {
        it(`keeps at most ${maxArtifacts} artifacts`, () => {
          expect(artifacts.length).toBeLessThanOrEqual(maxArtifacts);
        });
      }
    });
  });
}
