import { readFileSync } from "node:fs";
import { type ZodType, z } from "zod";

/**
 * The component schemas of OpenAI's published OpenAPI description that these tests use, and every schema they
 * reference, copied unmodified into the repository (MIT, see its LICENSE) so a clean clone tests without the
 * shared vendor specs beside it.
 */
const SPEC_PATH = new URL("../fixtures/vendor/openai/component-schemas.json", import.meta.url);

let definitions: Record<string, unknown> | undefined;
const compiled = new Map<string, ZodType>();

/**
 * A validator for one of the OpenAPI file's component schemas (`CreateChatCompletionRequest`,
 * `CreateChatCompletionStreamResponse`, `CreateResponse`, `Response`, `ErrorResponse`, …), so tests can check
 * that what Keel sends and what the fake servers answer have the real shapes. The file is OpenAPI 3.1 with
 * 3.0-style `nullable`, which is rewritten as a union with null; `oneOf` is read as `anyOf`, since the file's
 * variants overlap (a message item matches several) and exclusivity is not what these tests check.
 */
export function openAISchema(name: string): ZodType {
  let schema = compiled.get(name);
  if (!schema) {
    definitions ??= loadDefinitions();
    if (!(name in definitions)) throw new Error(`No schema ${name} in the OpenAI OpenAPI file`);
    schema = z.fromJSONSchema({ $defs: definitions, $ref: `#/$defs/${name}` } as never);
    compiled.set(name, schema);
  }
  return schema;
}

/** The issues of `value` against the schema `name`, as readable lines; empty when it conforms. */
export function openAIIssues(name: string, value: unknown): string[] {
  const result = openAISchema(name).safeParse(value);
  if (result.success) return [];
  return result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}

function loadDefinitions(): Record<string, unknown> {
  const document = JSON.parse(readFileSync(SPEC_PATH, "utf8")) as { schemas: Record<string, unknown> };
  const text = JSON.stringify(document.schemas).replaceAll('"#/components/schemas/', '"#/$defs/');
  return rewrite(JSON.parse(text)) as Record<string, unknown>;
}

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite);
  if (typeof node !== "object" || node === null) return node;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "nullable" || key === "discriminator") continue;
    result[key === "oneOf" ? "anyOf" : key] = rewrite(value);
  }
  if ((node as { nullable?: unknown }).nullable === true) return { anyOf: [result, { type: "null" }] };
  return result;
}
