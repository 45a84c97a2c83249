import { createRequire } from "node:module";
import type * as Re2js from "re2js";
import { ToolError } from "../../errors/error-classes.js";
import { ERROR_CODES } from "../../errors/error-codes.js";

export interface GrepPatternLimits {
  /** Longest pattern accepted, in characters (default 1000). */
  maxPatternLength: number;
  /** Largest compiled program accepted, in RE2 instructions (default 10,000). */
  maxProgramSize: number;
}

export const DEFAULT_GREP_PATTERN_LIMITS: Readonly<GrepPatternLimits> = Object.freeze({
  maxPatternLength: 1000,
  maxProgramSize: 10_000,
});

// The RE2 engine is only needed once a grep runs: required on first use, it stays out of start-up.
let re2js: typeof Re2js | undefined;

function loadRe2js(): typeof Re2js {
  re2js ??= createRequire(import.meta.url)("re2js") as typeof Re2js;
  return re2js;
}

/** A compiled grep pattern: linear-time in the line it is matched against. */
export interface GrepPattern {
  /** Where the first match in `line` starts, or -1. */
  search(line: string): number;
}

/**
 * Compile a pattern for `grep_files` with RE2 semantics (the `re2js` engine: an automaton, no backtracking), so
 * matching time is linear in the input whatever the pattern — `(a+)+$` cannot be driven into catastrophic
 * backtracking. The pattern's length and compiled size are bounded too, which bounds the per-byte cost.
 * Backreferences and lookaround, which no linear-time engine can offer, are refused with a clear error.
 */
export function compileGrepPattern(
  pattern: string,
  options: { caseSensitive?: boolean; limits?: Partial<GrepPatternLimits> } = {},
): GrepPattern {
  const limits = { ...DEFAULT_GREP_PATTERN_LIMITS, ...options.limits };
  if (pattern.length === 0) throw invalidPattern("the pattern is empty");
  if (pattern.length > limits.maxPatternLength) {
    throw invalidPattern(`the pattern is longer than ${limits.maxPatternLength} characters`);
  }
  const { RE2JS } = loadRe2js();
  let compiled: Re2js.RE2JS;
  try {
    compiled = RE2JS.compile(pattern, options.caseSensitive === false ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    throw invalidPattern(
      `${(error as Error).message.replace(/^error parsing regexp: /, "")}. Patterns use RE2 syntax: ` +
        "no backreferences (\\1) or lookaround ((?=…), (?!…), (?<=…)); repeat counts up to 1000",
    );
  }
  if (compiled.programSize() > limits.maxProgramSize) {
    throw invalidPattern(
      `the pattern is too complex (${compiled.programSize()} instructions, at most ${limits.maxProgramSize}); ` +
        "use smaller repeat counts or a simpler pattern",
    );
  }
  return {
    search(line) {
      if (!compiled.test(line)) return -1;
      const match = compiled.exec(line) as (RegExpExecArray & { index: number }) | null;
      return match?.index ?? 0;
    },
  };
}

function invalidPattern(reason: string): ToolError {
  return new ToolError(`grep_files: invalid pattern: ${reason}`, {
    code: ERROR_CODES.GREP_INVALID_PATTERN,
    hint: "grep_files takes an RE2 regular expression",
  });
}
