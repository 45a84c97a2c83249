import type { StandardSchemaV1 } from "@standard-schema/spec";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formatIssues, issuePath, validateWithSchema } from "./validate-with-schema.js";

describe("validateWithSchema", () => {
  it("resolves synchronously for zod with the parsed value", () => {
    const schema = z.object({ n: z.coerce.number(), tag: z.string().default("none") });
    const result = validateWithSchema(schema, { n: "42" });
    expect(result).not.toBeInstanceOf(Promise);
    expect(result).toEqual({ ok: true, value: { n: 42, tag: "none" } });
  });

  it("returns the issues of a bad value", () => {
    const result = validateWithSchema(z.object({ a: z.number() }), { a: "x" });
    expect(result).toEqual({
      ok: false,
      issues: [
        expect.objectContaining({ path: ["a"], message: "Invalid input: expected number, received string" }),
      ],
    });
  });

  it("returns a promise for an async Standard Schema", async () => {
    const asyncSchema: StandardSchemaV1<unknown, string> = {
      "~standard": {
        version: 1,
        vendor: "async",
        validate: async (value) =>
          typeof value === "string"
            ? { value: value.toUpperCase() }
            : { issues: [{ message: "not a string" }] },
      },
    };
    const good = validateWithSchema(asyncSchema, "hi");
    expect(good).toBeInstanceOf(Promise);
    expect(await good).toEqual({ ok: true, value: "HI" });
    expect(await validateWithSchema(asyncSchema, 1)).toEqual({
      ok: false,
      issues: [{ message: "not a string" }],
    });
  });
});

describe("formatIssues", () => {
  it("writes one `- path: message` line per issue", () => {
    const result = z
      .object({ a: z.number(), nested: z.object({ list: z.array(z.string()) }) })
      .safeParse({ a: "x", nested: { list: ["ok", 3] } });
    expect(result.success).toBe(false);
    expect(formatIssues(result.error!.issues)).toBe(
      [
        "- a: Invalid input: expected number, received string",
        "- nested.list.1: Invalid input: expected string, received number",
      ].join("\n"),
    );
  });

  it("names the root when an issue has no path", () => {
    expect(formatIssues([{ message: "expected an object" }])).toBe("- (root): expected an object");
    expect(formatIssues([{ message: "empty path", path: [] }])).toBe("- (root): empty path");
    expect(formatIssues([])).toBe("");
  });

  it("reads path segments given as objects", () => {
    const issue: StandardSchemaV1.Issue = { message: "bad", path: [{ key: "items" }, { key: 2 }, "name"] };
    expect(issuePath(issue)).toBe("items.2.name");
    expect(formatIssues([issue])).toBe("- items.2.name: bad");
  });
});
