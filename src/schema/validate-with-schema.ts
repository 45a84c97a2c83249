import type { StandardSchemaV1 } from "@standard-schema/spec";

export type SchemaValidation<T> =
  | { ok: true; value: T }
  | { ok: false; issues: readonly StandardSchemaV1.Issue[] };

/** Validate with a Standard Schema; resolves synchronously when the schema does (zod does). */
export function validateWithSchema<T>(
  schema: StandardSchemaV1<unknown, T>,
  value: unknown,
): SchemaValidation<T> | Promise<SchemaValidation<T>> {
  const result = schema["~standard"].validate(value);
  if (result instanceof Promise) return result.then(toValidation);
  return toValidation(result);
}

function toValidation<T>(result: StandardSchemaV1.Result<T>): SchemaValidation<T> {
  return result.issues ? { ok: false, issues: result.issues } : { ok: true, value: result.value };
}

/** One `- <path>: <issue>` line per issue, as the validation retry shows the model. */
export function formatIssues(issues: readonly StandardSchemaV1.Issue[]): string {
  return issues.map((issue) => `- ${issuePath(issue) || "(root)"}: ${issue.message}`).join("\n");
}

export function issuePath(issue: StandardSchemaV1.Issue): string {
  if (!issue.path) return "";
  return issue.path
    .map((segment) => (typeof segment === "object" ? String(segment.key) : String(segment)))
    .join(".");
}
