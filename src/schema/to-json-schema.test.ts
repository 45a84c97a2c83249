import type { StandardSchemaV1 } from "@standard-schema/spec";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError } from "../errors/error-classes.js";
import type { KeelError } from "../errors/keel-error.js";
import { isStandardSchema, toJsonSchema, toToolInputSchema } from "./to-json-schema.js";

/** A Standard Schema that validates but cannot describe itself as JSON Schema. */
const bareStandardSchema: StandardSchemaV1<unknown, { a: number }> = {
  "~standard": {
    version: 1,
    vendor: "acme",
    validate: (value) => ({ value: value as { a: number } }),
  },
};

describe("isStandardSchema", () => {
  it("recognises zod and other Standard Schemas but not JSON Schema objects", () => {
    expect(isStandardSchema(z.string())).toBe(true);
    expect(isStandardSchema(bareStandardSchema)).toBe(true);
    expect(isStandardSchema({ type: "object" })).toBe(false);
    expect(isStandardSchema({ "~standard": {} })).toBe(false);
    expect(isStandardSchema(null)).toBe(false);
    expect(isStandardSchema("schema")).toBe(false);
  });
});

describe("toJsonSchema", () => {
  it("turns a zod schema into draft-07 JSON Schema without $schema", () => {
    const schema = z.object({ a: z.number(), b: z.string().optional() });
    const json = toJsonSchema(schema);
    expect(json).toEqual({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "string" } },
      required: ["a"],
    });
    expect("$schema" in json).toBe(false);
  });

  it("describes the output side when asked", () => {
    const schema = z.object({ n: z.string().transform((text) => text.length) });
    expect(toJsonSchema(z.object({ a: z.number().default(1) }), "input")).toEqual({
      type: "object",
      properties: { a: { type: "number", default: 1 } },
    });
    expect(toJsonSchema(z.object({ a: z.number().default(1) }), "output")).toEqual({
      type: "object",
      properties: { a: { type: "number", default: 1 } },
      required: ["a"],
      additionalProperties: false,
    });
    expect(toJsonSchema(schema, "input")).toEqual({
      type: "object",
      properties: { n: { type: "string" } },
      required: ["n"],
    });
  });

  it("passes a plain JSON Schema through unchanged (same object)", () => {
    const json = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
    expect(toJsonSchema(json)).toBe(json);
  });

  it("refuses a Standard Schema without a JSON Schema converter with a ConfigError and hint", () => {
    let caught: unknown;
    try {
      toJsonSchema(bareStandardSchema);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const error = caught as KeelError;
    expect(error.code).toBe("config.error");
    expect(error.message).toBe("A acme schema cannot describe itself as JSON Schema, which the model needs");
    expect(error.hint).toBe(
      "Use zod 4 (or another library implementing Standard JSON Schema), or pass a JSON Schema object",
    );
  });
});

describe("toToolInputSchema", () => {
  it("gives an empty strict object schema when there is no schema", () => {
    expect(toToolInputSchema(undefined)).toEqual({
      type: "object",
      properties: {},
      additionalProperties: false,
    });
  });

  it("adds type: object to a JSON Schema that has properties but no type", () => {
    expect(toToolInputSchema({ properties: { q: { type: "string" } } })).toEqual({
      type: "object",
      properties: { q: { type: "string" } },
    });
  });

  it("keeps a JSON Schema that has a type or no properties as it is", () => {
    const typed = { type: "object", properties: {} };
    expect(toToolInputSchema(typed)).toBe(typed);
    const untyped = { description: "anything" };
    expect(toToolInputSchema(untyped)).toBe(untyped);
  });

  it("converts a zod object schema", () => {
    expect(toToolInputSchema(z.object({ query: z.string().describe("what to search") }))).toEqual({
      type: "object",
      properties: { query: { type: "string", description: "what to search" } },
      required: ["query"],
    });
  });

  it("propagates the ConfigError of an unconvertible schema", () => {
    expect(() => toToolInputSchema(bareStandardSchema)).toThrow(ConfigError);
  });
});
