import { describe, expect, it } from "vitest";
import { genAiFinishReason, genAiProviderName } from "./gen-ai-attributes.js";

describe("GenAI attribute values", () => {
  it("names providers as the conventions do, by the first part of Keel's or the AI SDK's provider id", () => {
    expect(
      ["openai", "openai.chat", "anthropic.messages", "google.generative-ai", "amazon-bedrock", "mock"].map(
        genAiProviderName,
      ),
    ).toEqual(["openai", "openai", "anthropic", "gcp.gemini", "aws.bedrock", "mock"]);
  });

  it("maps Keel's stop reasons to the conventions' finish reasons", () => {
    expect(
      ["end_turn", "stop_sequence", "tool_use", "max_tokens", "content_filter", "unknown"].map(
        genAiFinishReason,
      ),
    ).toEqual(["stop", "stop", "tool_call", "length", "content_filter", "unknown"]);
  });
});
