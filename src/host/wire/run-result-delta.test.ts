import { describe, expect, it } from "vitest";
import { parseActionFrame } from "./action-frame.js";
import { parseRunResult, RESULT_PAYLOAD_SCHEMAS } from "./run-result.js";

/**
 * The plain-text `message.delta` and the well-formed action frame are read by hand, without the schemas, for
 * speed: what they give must be exactly what the schemas give, and anything off the plain shape must still be
 * judged by the schemas.
 */

describe("the hand-read message.delta", () => {
  const chunks = [
    { role: "assistant", content: "token " },
    { role: "assistant", content: "x", msg_sequence: 4, is_final: true, all_content: "abcx" },
    { role: "assistant", content: null },
    { role: "assistant" },
  ];

  it("gives what the schemas give", () => {
    for (const chunk of chunks) {
      for (const header of [{}, { sequence: 3, timestamp: 1_700_000_000 }, { sequence: null }]) {
        const parsed = parseRunResult({ run_id: "r", type: "message.delta", data: { chunk }, ...header });
        expect(parsed.ok && parsed.result).toEqual({
          run_id: "r",
          type: "message.delta",
          data: RESULT_PAYLOAD_SCHEMAS["message.delta"].parse({ chunk }),
          ...(header.sequence != null ? { sequence: header.sequence } : {}),
          ...("timestamp" in header ? { timestamp: header.timestamp } : {}),
        });
      }
    }
  });

  it("leaves anything off the plain shape to the schemas", () => {
    const bad = [
      { run_id: "r", type: "message.delta", data: { chunk: { role: 1 } } },
      { run_id: "r", type: "message.delta", data: { chunk: { role: "a", msg_sequence: 1.5 } } },
      { run_id: "r", type: "message.delta", data: {} },
      { run_id: "r", type: "message.delta", data: { chunk: { role: "a" } }, sequence: "1" },
    ];
    for (const value of bad) expect(parseRunResult(value).ok).toBe(false);
    const usage = parseRunResult({
      run_id: "r",
      type: "message.delta",
      data: { chunk: { role: "a", content: [{ type: "text", text: "hi" }], name: "n" } },
      usage: { total_tokens: 2 },
    });
    expect(usage).toMatchObject({
      ok: true,
      result: { usage: { total_tokens: 2 }, data: { chunk: { name: "n" } } },
    });
  });
});

describe("the hand-read action frame", () => {
  it("reads a well-formed response and request as they are, and a partial one with the schema's defaults", () => {
    const response = { seq_id: 1, code: 0, message: "success", data: { a: 1 }, chunk_status: "continue" };
    expect(parseActionFrame(JSON.stringify(response))).toEqual({
      ok: true,
      frame: { kind: "response", response },
    });
    const request = { seq_id: 2, action: "run_agent", data: {} };
    expect(parseActionFrame(JSON.stringify(request))).toEqual({
      ok: true,
      frame: { kind: "request", request },
    });
    expect(parseActionFrame(JSON.stringify({ seq_id: 3, code: 0 }))).toEqual({
      ok: true,
      frame: {
        kind: "response",
        response: { seq_id: 3, code: 0, message: "", data: {}, chunk_status: "continue" },
      },
    });
  });

  it("still refuses what the schema refuses", () => {
    for (const bad of [
      { seq_id: 1, code: 0.5, message: "", data: {}, chunk_status: "end" },
      { seq_id: 1, code: 0, message: "", data: [], chunk_status: "end" },
      { seq_id: 1, code: 0, message: "", data: {}, chunk_status: "later" },
      { seq_id: 1, action: "", data: {} },
      { seq_id: 1.5, action: "x", data: {} },
      { seq_id: 1, action: "x", data: {}, context: [] },
    ])
      expect(parseActionFrame(JSON.stringify(bad)).ok).toBe(false);
  });
});
