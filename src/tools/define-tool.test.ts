import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  DEFAULT_EXECUTION_SPEC,
  isStreamingTool,
  normalizeApprovalMode,
  type Tool,
  type ToolContext,
} from "../contracts/tool.js";
import { defineTool } from "./define-tool.js";

const ctx = {} as ToolContext;

describe("defineTool", () => {
  it("builds the model's JSON Schema from a zod schema and runs execute as invoke", async () => {
    const add = defineTool({
      name: "add",
      description: "Add two numbers",
      inputSchema: z.object({ a: z.number(), b: z.number().describe("second") }),
      execute: ({ a, b }) => a + b,
    });
    expect(add.name).toBe("add");
    expect(add.description).toBe("Add two numbers");
    expect(add.schema()).toEqual({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number", description: "second" } },
      required: ["a", "b"],
    });
    expect(await add.invoke({ a: 2, b: 40 }, ctx)).toBe(42);
  });

  it("passes the context as the second argument of execute", async () => {
    const seen: unknown[] = [];
    const tool = defineTool({
      name: "ctx",
      description: "d",
      execute: (_input, context) => {
        seen.push(context);
        return "ok";
      },
    });
    const context = { toolCallId: "c1" } as ToolContext;
    await tool.invoke({}, context);
    expect(seen).toEqual([context]);
  });

  it("gives an empty strict object schema without inputSchema", () => {
    const tool = defineTool({ name: "noop", description: "d", execute: () => null });
    expect(tool.schema()).toEqual({ type: "object", properties: {}, additionalProperties: false });
  });

  it("has the documented execution spec defaults", () => {
    const tool = defineTool({ name: "t", description: "d", execute: () => null });
    expect(tool.executionSpec()).toEqual({
      concurrencySafe: false,
      interruptBehavior: "cancel",
      sideEffects: "unknown",
      approvalMode: "inherit",
      defaultTimeoutMs: null,
      readsFiles: false,
      writesFiles: false,
      supportsStreaming: false,
    });
    expect(tool.executionSpec()).toEqual(DEFAULT_EXECUTION_SPEC);
    expect(Object.isFrozen(tool.executionSpec())).toBe(true);
    expect(tool.requiresApproval).toBeUndefined();
  });

  it("takes every execution spec override", () => {
    const tool = defineTool({
      name: "t",
      description: "d",
      execute: () => null,
      concurrencySafe: true,
      interruptBehavior: "block",
      sideEffects: "write",
      approvalMode: "always",
      timeoutMs: 1500,
      readsFiles: true,
      writesFiles: true,
    });
    expect(tool.executionSpec()).toEqual({
      concurrencySafe: true,
      interruptBehavior: "block",
      sideEffects: "write",
      approvalMode: "always",
      defaultTimeoutMs: 1500,
      readsFiles: true,
      writesFiles: true,
      supportsStreaming: false,
    });
  });

  it("accepts never_require and always_require as approvalMode aliases", () => {
    const make = (approvalMode: "never_require" | "always_require" | "never" | "inherit") =>
      defineTool({ name: "t", description: "d", execute: () => null, approvalMode }).executionSpec()
        .approvalMode;
    expect(make("never_require")).toBe("never");
    expect(make("always_require")).toBe("always");
    expect(make("never")).toBe("never");
    expect(make("inherit")).toBe("inherit");
  });

  it("rejects a bad approvalMode", () => {
    expect(() =>
      defineTool({
        name: "t",
        description: "d",
        execute: () => null,
        approvalMode: "sometimes" as "never",
      }),
    ).toThrow(new TypeError('approvalMode must be "inherit", "never" or "always", not "sometimes"'));
    expect(() => normalizeApprovalMode("ALWAYS")).toThrow(TypeError);
    expect(normalizeApprovalMode(undefined)).toBe("inherit");
  });

  it("rejects a missing name or execute", () => {
    expect(() => defineTool({ name: "", description: "d", execute: () => null })).toThrow(
      new TypeError("defineTool: `name` must be a non-empty string"),
    );
    expect(() =>
      defineTool({ name: "x", description: "d", execute: undefined as unknown as () => null }),
    ).toThrow(new TypeError('defineTool("x"): `execute` must be a function'));
  });

  it("keeps a custom requiresApproval", async () => {
    const tool = defineTool({
      name: "t",
      description: "d",
      inputSchema: z.object({ amount: z.number() }),
      execute: () => null,
      requiresApproval: ({ amount }) => amount > 100,
    });
    expect(await tool.requiresApproval!({ amount: 500 }, ctx)).toBe(true);
    expect(await tool.requiresApproval!({ amount: 5 }, ctx)).toBe(false);
  });

  describe("validateParams with zod", () => {
    const tool = defineTool({
      name: "t",
      description: "d",
      inputSchema: z.object({ a: z.coerce.number(), label: z.string().default("none") }),
      execute: ({ a }) => a,
    });

    it("returns the parsed, coerced value", async () => {
      expect(await tool.validateParams!({ a: "7" })).toEqual({ ok: true, value: { a: 7, label: "none" } });
    });

    it("returns one `- path: message` line per issue", async () => {
      const strict = defineTool({
        name: "s",
        description: "d",
        inputSchema: z.object({ a: z.number(), b: z.string() }),
        execute: () => null,
      });
      expect(await strict.validateParams!({ a: "x" })).toEqual({
        ok: false,
        error: [
          "- a: Invalid input: expected number, received string",
          "- b: Invalid input: expected string, received undefined",
        ].join("\n"),
      });
    });

    it("validates synchronously", () => {
      const outcome = tool.validateParams!({ a: 1 });
      expect(outcome).not.toBeInstanceOf(Promise);
    });
  });

  describe("validateParams with a JSON Schema", () => {
    const tool = defineTool({
      name: "search",
      description: "d",
      inputSchema: {
        type: "object",
        properties: { q: { type: "string" }, limit: { type: "number" }, page: { type: "number" } },
        required: ["q", "limit"],
      },
      execute: () => null,
    });

    it("passes the schema through to the model", () => {
      expect(tool.schema()).toEqual({
        type: "object",
        properties: { q: { type: "string" }, limit: { type: "number" }, page: { type: "number" } },
        required: ["q", "limit"],
      });
    });

    it("accepts an object with the required keys, unchanged", () => {
      const params = { q: "x", limit: 3 };
      const outcome = tool.validateParams!(params);
      expect(outcome).toEqual({ ok: true, value: params });
      expect((outcome as { value: unknown }).value).toBe(params);
    });

    it("names each missing required key", () => {
      expect(tool.validateParams!({ page: 1 })).toEqual({
        ok: false,
        error: "- q: required\n- limit: required",
      });
      expect(tool.validateParams!({ q: "x" })).toEqual({ ok: false, error: "- limit: required" });
    });

    it("refuses anything but an object", () => {
      const error = { ok: false, error: "- (root): expected an object of arguments" };
      expect(tool.validateParams!(null)).toEqual(error);
      expect(tool.validateParams!([1])).toEqual(error);
      expect(tool.validateParams!("q")).toEqual(error);
    });

    it("accepts any object when there is no schema", () => {
      const bare = defineTool({ name: "b", description: "d", execute: () => null });
      expect(bare.validateParams!({ anything: 1 })).toEqual({ ok: true, value: { anything: 1 } });
    });
  });

  it("detects a streaming tool and marks supportsStreaming", async () => {
    const streaming = defineTool({
      name: "stream",
      description: "d",
      inputSchema: z.object({}),
      execute: () => "done",
      async *stream() {
        yield { type: "delta", text: "a" } as const;
        yield { type: "result", data: "done" } as const;
      },
    });
    expect(isStreamingTool(streaming)).toBe(true);
    expect(streaming.executionSpec().supportsStreaming).toBe(true);
    const parts: unknown[] = [];
    if (isStreamingTool(streaming))
      for await (const part of streaming.invokeStream({}, ctx)) parts.push(part);
    expect(parts).toEqual([
      { type: "delta", text: "a" },
      { type: "result", data: "done" },
    ]);
    const plain = defineTool({
      name: "plain",
      description: "d",
      inputSchema: z.object({}),
      execute: () => null,
    });
    expect(isStreamingTool(plain)).toBe(false);
  });

  it("gives a tool without inputSchema a type usable as a Tool", () => {
    const bare = defineTool({ name: "ping", description: "d", execute: () => "pong" });
    const asTool: Tool = bare;
    expect(asTool.name).toBe("ping");
  });

  it("is durableIdempotent by default and can opt out", () => {
    expect(defineTool({ name: "t", description: "d", execute: () => null }).durableIdempotent).toBe(true);
    expect(
      defineTool({ name: "t", description: "d", execute: () => null, durableIdempotent: false })
        .durableIdempotent,
    ).toBe(false);
  });
});
