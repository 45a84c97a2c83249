import { describe, expect, it } from "vitest";
import type { Message } from "../contracts/message.js";
import {
  dropOrphanToolMessages,
  messageTokens,
  newestArtifacts,
  newestWindow,
  omissionSummaryMessage,
  totalTokens,
} from "./transcript-window.js";

const length = (text: string) => text.length;

describe("transcript window helpers", () => {
  it("counts text and, for assistants, tool call names and arguments", () => {
    expect(messageTokens({ role: "user", content: [{ type: "text", text: "abc" }] }, length)).toBe(3);
    expect(
      messageTokens(
        {
          role: "assistant",
          content: "ok",
          toolCalls: [
            { id: "1", name: "add", arguments: { a: 1 } },
            { id: "2", name: "neg", arguments: {}, rawArguments: "{x" },
          ],
        },
        length,
      ),
    ).toBe(2 + "add".length + '{"a":1}'.length + "neg".length + "{x".length);
  });

  it("finds the newest contiguous window within the bounds", () => {
    const messages: Message[] = ["aaaa", "b", "cc", "ddd"].map((content) => ({ role: "user", content }));
    const tokensOf = (message: Message) => messageTokens(message, length);
    expect(newestWindow(messages, tokensOf, { maxMessages: null, maxTokens: null })).toEqual({
      start: 0,
      keptTokens: 0,
    });
    expect(newestWindow(messages, tokensOf, { maxMessages: 2, maxTokens: null })).toEqual({
      start: 2,
      keptTokens: 0,
    });
    // "b" would fit again after "aaaa"... but the window stops at the first message that does not fit.
    expect(newestWindow(messages, tokensOf, { maxMessages: null, maxTokens: 6 })).toEqual({
      start: 1,
      keptTokens: 6,
    });
    expect(newestWindow(messages, tokensOf, { maxMessages: null, maxTokens: 2 })).toEqual({
      start: 4,
      keptTokens: 0,
    });
    expect(newestWindow(messages, tokensOf, { maxMessages: null, maxTokens: 100, from: 2 })).toEqual({
      start: 2,
      keptTokens: 5,
    });
  });

  it("drops only tool messages that answer no kept call", () => {
    const kept: Message[] = [
      { role: "tool", toolCallId: "gone", toolName: "t", content: "x" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "t", arguments: {} }] },
      { role: "tool", toolCallId: "c1", toolName: "t", content: "y" },
    ];
    expect(dropOrphanToolMessages(kept)).toEqual(kept.slice(1));
    const noTools: Message[] = [{ role: "user", content: "hi" }];
    expect(dropOrphanToolMessages(noTools)).toBe(noTools);
  });

  it("keeps the newest artifacts", () => {
    const artifacts = [1, 2, 3].map((index) => ({
      name: `a${index}`,
      kind: "generic",
      payload: index,
      metadata: {},
    }));
    expect(newestArtifacts(artifacts, 2)).toEqual({
      sessionArtifacts: artifacts.slice(1),
      omittedArtifacts: 1,
    });
    expect(newestArtifacts(artifacts, 5)).toEqual({ sessionArtifacts: artifacts, omittedArtifacts: 0 });
    expect(newestArtifacts(artifacts, 0)).toEqual({ sessionArtifacts: [], omittedArtifacts: 3 });
  });

  it("builds the summary message and sums tokens", () => {
    expect(omissionSummaryMessage(4)).toEqual({
      role: "system",
      content: "Summary: omitted 4 older message(s)",
    });
    expect(
      totalTokens(
        [
          { role: "user", content: "ab" },
          { role: "system", content: "cde" },
        ],
        (message) => messageTokens(message, length),
      ),
    ).toBe(5);
  });
});
