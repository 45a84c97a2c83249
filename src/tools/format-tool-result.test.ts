import { describe, expect, it } from "vitest";
import { formatToolError, formatToolResult } from "./format-tool-result.js";

describe("formatToolResult", () => {
  it("shows strings as they are and scalars as text", () => {
    expect(formatToolResult("hello")).toBe("hello");
    expect(formatToolResult(42)).toBe("42");
    expect(formatToolResult(false)).toBe("false");
    expect(formatToolResult(undefined)).toBe("");
    expect(formatToolResult(null)).toBe("null");
  });

  it("shows objects as JSON, BigInts as strings, and a cycle as its string form", () => {
    expect(formatToolResult({ a: [1, 2] })).toBe('{"a":[1,2]}');
    expect(formatToolResult({ big: 10n })).toBe('{"big":"10"}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(formatToolResult(cyclic)).toBe("[object Object]");
  });

  it("shows a ToolResult without empty artifacts", () => {
    expect(formatToolResult({ ok: true, summary: "read 2 lines", data: "a\nb", artifacts: [] })).toBe(
      '{"ok":true,"summary":"read 2 lines","data":"a\\nb"}',
    );
    expect(
      formatToolResult({
        ok: false,
        summary: "too big",
        artifacts: [{ id: "x", name: "out.txt" }],
        error: { code: "tool.too_large", message: "big" },
      }),
    ).toBe(
      '{"ok":false,"summary":"too big","error":{"code":"tool.too_large","message":"big"},"artifacts":[{"id":"x","name":"out.txt"}]}',
    );
  });

  it("formats errors as {ok: false, error}", () => {
    expect(formatToolError("tool.x", "broke")).toBe(
      '{"ok":false,"error":{"code":"tool.x","message":"broke"}}',
    );
  });
});
