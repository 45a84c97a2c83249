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

  it("shows objects as JSON, converting what JSON cannot take as it is and describing a cycle", () => {
    expect(formatToolResult({ a: [1, 2] })).toBe('{"a":[1,2]}');
    expect(formatToolResult({ big: 10n, huge: 2n ** 64n })).toBe('{"big":10,"huge":"18446744073709551616"}');
    expect(formatToolResult({ m: new Map([["k", 1]]), s: new Set([1]) })).toBe('{"m":{"k":1},"s":[1]}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(formatToolResult(cyclic)).toBe('{"self":"[Circular $]"}');
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
    expect(formatToolError("tool.x", "broke", "try y")).toBe(
      '{"ok":false,"error":{"code":"tool.x","message":"broke","hint":"try y"}}',
    );
  });
});
