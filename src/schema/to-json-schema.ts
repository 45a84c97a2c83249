import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import { ConfigError } from "../errors/error-classes.js";

/** A schema Keel accepts: any Standard Schema that can describe itself as JSON Schema, or a JSON Schema. */
export type SchemaLike = StandardSchemaV1 | StandardJSONSchemaV1 | Record<string, unknown>;

export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as StandardSchemaV1)["~standard"]?.validate === "function"
  );
}

function hasJsonSchemaConverter(value: unknown): value is StandardJSONSchemaV1 {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as StandardJSONSchemaV1)["~standard"]?.jsonSchema?.input === "function"
  );
}

/**
 * JSON Schema for the model. Standard JSON Schema converters (zod 4, arktype, …) are asked for draft-07;
 * a plain object is taken to be JSON Schema already.
 */
export function toJsonSchema(schema: SchemaLike, io: "input" | "output" = "input"): Record<string, unknown> {
  if (hasJsonSchemaConverter(schema)) {
    const converted = schema["~standard"].jsonSchema[io]({ target: "draft-07" });
    const { $schema: _ignored, ...rest } = converted;
    return rest;
  }
  if (isStandardSchema(schema)) {
    throw new ConfigError(
      `A ${schema["~standard"].vendor} schema cannot describe itself as JSON Schema, which the model needs`,
      {
        hint: "Use zod 4 (or another library implementing Standard JSON Schema), or pass a JSON Schema object",
      },
    );
  }
  return schema;
}

/** The schema as the model sees tool params: always an object schema. */
export function toToolInputSchema(schema: SchemaLike | undefined): Record<string, unknown> {
  if (schema === undefined) return { type: "object", properties: {}, additionalProperties: false };
  const json = toJsonSchema(schema);
  return json.type === undefined && json.properties !== undefined ? { type: "object", ...json } : json;
}
