import { describe, expect, it } from "vitest";
import {
  limitResultSize,
  limitToolOutput,
  MAX_RESULT_BYTES,
  TRUNCATED_TEXT_CHARS,
  TRUNCATION_MARKER,
} from "./result-size.js";

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const CUT = TRUNCATED_TEXT_CHARS + TRUNCATION_MARKER.length;

describe("the 1 MiB result bound", () => {
  it("leaves a result within the bound as it is", () => {
    const result = {
      run_id: "r",
      type: "message.completed",
      data: { message: { role: "assistant", content: "hi" } },
    };
    const limited = limitResultSize(result);
    expect(limited.truncated).toBe(false);
    expect(limited.result).toBe(result);
  });

  it("cuts a message's content to 10,000 characters and the marker", () => {
    const content = "x".repeat(2 * MAX_RESULT_BYTES);
    const limited = limitResultSize({
      run_id: "r",
      type: "message.completed",
      data: { message: { role: "assistant", content } },
    });
    expect(limited.truncated).toBe(true);
    const cut = (limited.result.data.message as { content: string }).content;
    expect(cut).toHaveLength(CUT);
    expect(cut.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(cut.startsWith("x".repeat(TRUNCATED_TEXT_CHARS))).toBe(true);
  });

  it("cuts the text parts of a content list and a delta's all_content", () => {
    const big = "y".repeat(MAX_RESULT_BYTES);
    const limited = limitResultSize({
      run_id: "r",
      type: "message.delta",
      data: { chunk: { role: "assistant", content: [{ type: "text", text: big }], all_content: big } },
    });
    const chunk = limited.result.data.chunk as { content: { text: string }[]; all_content: string };
    expect(chunk.content[0]!.text).toHaveLength(CUT);
    expect(chunk.all_content).toHaveLength(CUT);
    expect(chunk.content[0]).toMatchObject({ type: "text" });
  });

  it("turns a tool result of many short texts, still too large once texts are cut, into its cut JSON", () => {
    const result = Object.fromEntries(
      Array.from({ length: 200 }, (_, index) => [`k${index}`, "z".repeat(9_000)]),
    );
    const limited = limitResultSize({
      run_id: "r",
      type: "tool.call.completed",
      data: { tool_call_id: "c", tool_name: "t", result },
    });
    expect(limited.truncated).toBe(true);
    expect(limited.result.data.result).toEqual({
      value: expect.stringMatching(/^\{"k0":"z+.*\.\.\.\[truncated\]$/),
      truncated: true,
    });
    expect(bytes(limited.result)).toBeLessThan(MAX_RESULT_BYTES);
  });

  it("measures JSON escapes: 200,000 control characters are 1.2 MB of JSON and are cut", () => {
    const content = "\u0001".repeat(200_000);
    expect(bytes(content)).toBeGreaterThan(MAX_RESULT_BYTES);
    const limited = limitResultSize({
      run_id: "r",
      type: "message.completed",
      data: { message: { role: "assistant", content } },
    });
    expect(limited.truncated).toBe(true);
    // Just under the bound in characters, but within it in bytes: not cut.
    const under = "\u0001".repeat(170_000);
    expect(
      limitResultSize({
        run_id: "r",
        type: "message.completed",
        data: { message: { role: "a", content: under } },
      }).truncated,
    ).toBe(false);
  });

  it("never cuts an artifact's base64 or a state value, which have bounds of their own", () => {
    const artifact = {
      run_id: "r",
      type: "artifact.created",
      data: { artifact_id: "a", artifact_type: "file", content_base64: "QUFB".repeat(400_000) },
    };
    expect(limitResultSize(artifact)).toEqual({ result: artifact, truncated: false });
    const state = {
      run_id: "r",
      type: "state.updated",
      data: { scope: "conversation", key: "k", value: "v".repeat(2e6) },
    };
    expect(limitResultSize(state).result).toBe(state);
  });

  it("cuts a tool's output to a given size, whatever its shape", () => {
    expect(limitToolOutput("small")).toBe("small");
    expect(limitToolOutput("s".repeat(MAX_RESULT_BYTES))).toHaveLength(CUT);
    expect(
      limitToolOutput(
        Array.from({ length: 100 }, () => "a".repeat(9_000)),
        100_000,
      ),
    ).toEqual({
      value: expect.stringContaining(TRUNCATION_MARKER),
      truncated: true,
    });
  });
});
