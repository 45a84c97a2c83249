import type { ModelOutputSchema } from "../../../contracts/language-model.js";

/** OpenAI's description of a JSON-schema output: the fields of `response_format.json_schema` / `text.format`. */
export interface JsonSchemaFormat {
  name: string;
  schema: Record<string, unknown>;
  strict: boolean;
}

/**
 * The native structured-output format for an output schema. `strict` is asked for only when the schema
 * meets strict mode's rules (every object closed with `additionalProperties: false` and all its properties
 * required), since a strict request with another schema is refused; the name is cut to OpenAI's alphabet.
 */
export function toJsonSchemaFormat(output: ModelOutputSchema): JsonSchemaFormat {
  const name = output.name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "output";
  return { name, schema: output.schema, strict: isStrictSchema(output.schema) };
}

function isStrictSchema(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(isStrictSchema);
  if (typeof schema !== "object" || schema === null) return true;
  const node = schema as Record<string, unknown>;
  const properties = node.properties;
  const isObject = node.type === "object" || (typeof properties === "object" && properties !== null);
  if (isObject) {
    if (node.additionalProperties !== false) return false;
    const keys = Object.keys((properties ?? {}) as object);
    const required = Array.isArray(node.required) ? node.required : [];
    if (!keys.every((key) => required.includes(key))) return false;
  }
  for (const key of ["properties", "$defs", "definitions"]) {
    const children = node[key];
    if (typeof children === "object" && children !== null && !Object.values(children).every(isStrictSchema)) {
      return false;
    }
  }
  for (const key of ["items", "anyOf", "allOf", "oneOf"]) {
    if (node[key] !== undefined && !isStrictSchema(node[key])) return false;
  }
  return true;
}
