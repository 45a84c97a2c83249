import type { z } from "zod";
import { type ConfigIssue, ConfigValidationError } from "../errors/error-classes.js";
import { KeelError } from "../errors/keel-error.js";
import { nearMatch } from "./near-match.js";

/**
 * Turns zod's issues into Keel's config issues: every issue names its dotted path
 * (`agents[0].runtime.max_step`), says what was expected, and unknown keys get a "Did you mean …?" hint.
 */

/** Keys older agent.json files had and Keel rejects, with what replaced them. */
export const REMOVED_KEYS: Readonly<Record<string, string>> = Object.freeze({
  execution_policy: "Implement ToolExecutor.evaluatePolicy in a custom tool_executor instead.",
  followup_resolver: "Implement Pattern.resolveFollowup in a custom pattern instead.",
  response_repair_policy: "Implement Pattern.repairEmptyResponse in a custom pattern instead.",
});

// zod reports unknown keys without the keys the object does accept, and an error map can only return a message.
// The map below therefore encodes the accepted keys into the message; `toConfigIssues` decodes them again.
const KNOWN_KEYS_MARK = "\u0000keel:known-keys:";

const errorMap: z.core.$ZodErrorMap = (issue) => {
  if (issue.code !== "unrecognized_keys") return undefined;
  const shape = (issue.inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod
    ?.def?.shape;
  return shape ? KNOWN_KEYS_MARK + JSON.stringify(Object.keys(shape)) : undefined;
};

/**
 * The options every config parse passes to `safeParse`, so issues carry their input and unknown keys their
 * siblings. `jitless`: a config is parsed once, so compiling zod's fast path for its objects costs far more than
 * it could save; the result is the same either way.
 */
export const CONFIG_PARSE_OPTIONS = Object.freeze({ error: errorMap, reportInput: true, jitless: true });

/** `agents[0].tools[1].id`; a key that is not a plain identifier is quoted: `extra_headers["X-Key"]`. */
export function formatConfigPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(segment)))
      text += text ? `.${String(segment)}` : String(segment);
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text;
}

/** What a value is, for "expected X, got Y". */
function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "function") return "a function";
  if (typeof value === "object") return "an object";
  return typeof value;
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  object: "an object",
  record: "an object",
  array: "an array",
  function: "a function",
  null: "null",
};

function quoteAll(values: readonly unknown[]): string {
  return values.map((value) => (typeof value === "string" ? `'${value}'` : String(value))).join(", ");
}

function suggestion(input: unknown, candidates: readonly unknown[]): string {
  const strings = candidates.filter((value): value is string => typeof value === "string");
  const near = typeof input === "string" ? nearMatch(input, strings) : undefined;
  return near === undefined ? `Valid values: ${quoteAll(candidates)}.` : `Did you mean '${near}'?`;
}

function unknownKeyIssue(path: PropertyKey[], key: string, known: readonly string[]): ConfigIssue {
  const replacement = REMOVED_KEYS[key];
  if (replacement !== undefined) {
    return { path: formatConfigPath(path), message: `'${key}' was removed`, hint: replacement };
  }
  const near = nearMatch(key, known);
  let hint: string;
  if (near !== undefined) hint = `Did you mean '${near}'?`;
  else if (known.length > 0) hint = `Valid keys here: ${known.join(", ")}.`;
  else hint = "Remove it.";
  return { path: formatConfigPath(path), message: `unknown key '${key}'`, hint };
}

function decodeKnownKeys(message: string): string[] {
  if (!message.startsWith(KNOWN_KEYS_MARK)) return [];
  return JSON.parse(message.slice(KNOWN_KEYS_MARK.length)) as string[];
}

function sizeMessage(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string {
  const small = issue.code === "too_small";
  const limit = Number(small ? issue.minimum : issue.maximum);
  const got = typeof issue.input === "number" ? `, got ${issue.input}` : "";
  if (issue.origin === "string") {
    if (small && limit === 1) return "must not be empty";
    return `must have ${small ? "at least" : "at most"} ${limit} characters`;
  }
  if (issue.origin === "array") return `must contain ${small ? "at least" : "at most"} ${limit} item(s)`;
  if (issue.inclusive) return `must be ${small ? "at least" : "at most"} ${limit}${got}`;
  return `must be ${small ? "greater" : "less"} than ${limit}${got}`;
}

/** One zod issue (and the issues nested in it) as config issues, appended to `out`. */
function translate(issue: z.core.$ZodIssue, prefix: readonly PropertyKey[], out: ConfigIssue[]): void {
  const path = [...prefix, ...issue.path];
  const at = formatConfigPath(path);
  const last = path[path.length - 1];
  switch (issue.code) {
    case "unrecognized_keys": {
      const known = decodeKnownKeys(issue.message);
      for (const key of issue.keys) out.push(unknownKeyIssue([...path, key], key, known));
      return;
    }
    case "invalid_union": {
      if (issue.errors.length > 0) {
        // Our unions put the config-file form (a plugin ref) last; when no branch fits, the ref's issues are the
        // ones that say what to write, the code-first branch only says "not a Tool object".
        for (const nested of issue.errors[issue.errors.length - 1] ?? []) translate(nested, path, out);
        return;
      }
      const options = "options" in issue ? (issue.options ?? []) : [];
      const input = issue.discriminator
        ? (issue.input as Record<string, unknown> | undefined)?.[issue.discriminator]
        : undefined;
      if (issue.discriminator && input === undefined) {
        out.push({
          path: at,
          message: `missing required key '${issue.discriminator}'`,
          hint: `Valid values: ${quoteAll(options)}.`,
        });
      } else {
        const shown = typeof input === "string" ? `'${input}'` : describeValue(input);
        out.push({
          path: at,
          message: `unknown ${issue.discriminator ?? "value"} ${shown}`,
          hint: suggestion(input, options),
        });
      }
      return;
    }
    case "invalid_type": {
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      if (issue.input === undefined && typeof last === "string") {
        out.push({ path: at, message: `missing required key '${last}' (${expected})` });
      } else {
        out.push({ path: at, message: `expected ${expected}, got ${describeValue(issue.input)}` });
      }
      return;
    }
    case "invalid_value":
      out.push({
        path: at,
        message:
          issue.values.length === 1
            ? `expected ${quoteAll(issue.values)}, got ${describeValue(issue.input)}`
            : `expected one of ${quoteAll(issue.values)}, got ${describeValue(issue.input)}`,
        hint: suggestion(issue.input, issue.values),
      });
      return;
    case "too_small":
    case "too_big":
      out.push({ path: at, message: sizeMessage(issue) });
      return;
    case "invalid_key": {
      const nested: ConfigIssue[] = [];
      for (const keyIssue of issue.issues) translate(keyIssue, [], nested);
      out.push({
        path: at,
        message: `invalid key ${JSON.stringify(issue.input)}: ${nested[0]?.message ?? "not allowed"}`,
      });
      return;
    }
    case "custom": {
      const hint = (issue.params as { hint?: unknown } | undefined)?.hint;
      out.push(
        typeof hint === "string"
          ? { path: at, message: issue.message, hint }
          : { path: at, message: issue.message },
      );
      return;
    }
    default:
      out.push({ path: at, message: issue.message });
  }
}

/**
 * Every problem zod found, as `{path, message, hint}`. Unknown and removed keys come first: a misspelt required key
 * shows up both as unknown and as missing, and the unknown one carries the "Did you mean" that explains both.
 */
export function toConfigIssues(error: z.ZodError): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const issue of error.issues) translate(issue, [], issues);
  const isKeyIssue = (issue: ConfigIssue) =>
    issue.message.startsWith("unknown key") || issue.message.endsWith("was removed");
  return [...issues.filter(isKeyIssue), ...issues.filter((issue) => !isKeyIssue(issue))];
}

/** How a path reads in a sentence; the root of the config has the empty path. */
function displayPath(path: string): string {
  return path === "" ? "config" : path;
}

/** A `ConfigValidationError` whose message and hint are the first issue's and whose `issues` hold them all. */
export function configValidationError(
  issues: ConfigIssue[],
  { configPath }: { configPath?: string } = {},
): ConfigValidationError {
  const first = issues[0] ?? { path: "", message: "invalid config" };
  const more =
    issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? "s" : ""})` : "";
  return new ConfigValidationError(`${displayPath(first.path)}: ${first.message}${more}`, {
    issues,
    hint: first.hint ?? `Fix '${displayPath(first.path)}'; every issue is listed in error.issues.`,
    ...(configPath === undefined ? {} : { context: { configPath } }),
  });
}

/** An error as the CLI prints it: its string form (message, `hint:`), then each config issue with its hint. */
export function formatConfigError(error: unknown): string {
  if (!KeelError.isInstance(error))
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const lines = [error.toString()];
  const issues = (error as { issues?: ConfigIssue[] }).issues ?? [];
  if (issues.length > 0) {
    lines.push(`${issues.length} issue${issues.length > 1 ? "s" : ""}:`);
    for (const issue of issues) {
      lines.push(`  - ${displayPath(issue.path)}: ${issue.message}`);
      if (issue.hint) lines.push(`    hint: ${issue.hint}`);
    }
  }
  return lines.join("\n");
}
