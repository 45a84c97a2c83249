import { ConfigLoadError } from "../errors/error-classes.js";

/**
 * `${VAR}` and `${VAR:-default}` in config text. Expansion works on the raw text before JSON parsing,
 * so a reference may stand for a number too (`"max_steps": ${STEPS:-16}`).
 */

// A `${` with no closing brace, or with something other than a variable name inside, does not match and stays.
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** The variables references are looked up in (`process.env` by default), typed without Node's type definitions. */
export type EnvVariables = Readonly<Record<string, string | undefined>>;

/** One replaced reference: where it was in the original text and where its value is in the expanded text. */
export interface EnvReplacement {
  sourceStart: number;
  sourceEnd: number;
  expandedStart: number;
  expandedEnd: number;
}

/** The expanded text and the replacements made, so a position in it can be traced back to the original. */
export interface ExpandedText {
  text: string;
  replacements: EnvReplacement[];
}

/**
 * Like {@link expandEnv}, but also returns where each reference was replaced (a JSON error found after
 * expansion is reported at its place in the file the user wrote).
 */
export function expandEnvDetailed(text: string, env: EnvVariables = process.env): ExpandedText {
  const replacements: EnvReplacement[] = [];
  let expanded = "";
  let last = 0;
  for (const match of text.matchAll(REFERENCE)) {
    const [reference, name, fallback] = match as unknown as [string, string, string | undefined];
    const value = env[name];
    let replacement: string;
    // Shell semantics: `:-` also applies when the variable is set but empty.
    if (fallback !== undefined) replacement = value === undefined || value === "" ? fallback : value;
    else if (value !== undefined) replacement = value;
    else {
      throw new ConfigLoadError(
        `Environment variable '${name}' is not set (referenced in config as ${reference})`,
        {
          hint: `Set '${name}' in your shell, or give a default: \${${name}:-value}`,
          context: { variable: name },
        },
      );
    }
    const start = match.index;
    expanded += text.slice(last, start);
    replacements.push({
      sourceStart: start,
      sourceEnd: start + reference.length,
      expandedStart: expanded.length,
      expandedEnd: expanded.length + replacement.length,
    });
    expanded += replacement;
    last = start + reference.length;
  }
  return { text: expanded + text.slice(last), replacements };
}

/** Replace `${VAR}` and `${VAR:-default}`; an unset variable without a default is a `ConfigLoadError` naming it. */
export function expandEnv(text: string, env: EnvVariables = process.env): string {
  return expandEnvDetailed(text, env).text;
}

/** Map an offset in the expanded text back to the original: inside a substituted value, the reference's start. */
export function toSourceOffset(expanded: ExpandedText, offset: number): number {
  let shift = 0;
  for (const replacement of expanded.replacements) {
    if (offset < replacement.expandedStart) break;
    if (offset < replacement.expandedEnd) return replacement.sourceStart;
    shift = replacement.sourceEnd - replacement.expandedEnd;
  }
  return offset + shift;
}
