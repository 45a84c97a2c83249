import path from "node:path";
import { SandboxError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";

/** A path as the model wrote it, after the syntactic checks: POSIX-normalized, absolute or relative. */
export interface PathInput {
  /** What the model wrote, for messages. */
  readonly given: string;
  /** `path.posix.normalize` of it, without a trailing slash; `.` for the root. */
  readonly normalized: string;
  readonly absolute: boolean;
}

const MAX_PATH_LENGTH = 4096;
const MAX_SEGMENT_BYTES = 255;
// Characters whose compatibility form (NFKC) or look could stand for a separator, a dot, a drive colon, `~`
// or `%`: fullwidth and small forms, dot leaders, slash and backslash look-alikes.
const STRUCTURAL = /[./\\:~%\0]/;
const SLASH_LOOK_ALIKES = /[\u2044\u2215\u2216\u29f5\u29f8\u29f9\ufe68\uff0f\uff3c]/u;
// C0 and C1 controls, DEL, and invisible format characters (zero-width, bidi overrides, BOM).
const CONTROL = /\p{Cc}/u;
const FORMAT = /\p{Cf}/u;

/**
 * Check a path the model gave before anything touches the filesystem. Refused with
 * `sandbox.invalid_path`: anything but a non-empty string, NUL and control characters, backslashes, drive
 * letters, URLs, URL-encoded bytes, `~`, invisible characters and Unicode look-alikes of `.` `/` `\` `:` —
 * none of them is ever needed to name a file in the workspace, and each is a known way to smuggle a path past
 * a checker. A relative path that climbs out of its root (`..` first once normalized) is refused with
 * `sandbox.path_outside` here, without a look at what lies outside.
 */
export function checkPathInput(input: unknown, tool: string): PathInput {
  if (typeof input !== "string") throw invalid(tool, String(input), "the path must be a string");
  const given = input;
  if (given.length === 0) throw invalid(tool, given, "the path is empty");
  if (given.length > MAX_PATH_LENGTH) {
    throw invalid(tool, `${given.slice(0, 40)}…`, `the path is longer than ${MAX_PATH_LENGTH} characters`);
  }
  if (given.includes("\0")) throw invalid(tool, given, "the path contains a NUL byte");
  if (CONTROL.test(given)) throw invalid(tool, given, "the path contains a control character");
  if (FORMAT.test(given)) throw invalid(tool, given, "the path contains an invisible formatting character");
  if (given.includes("\\")) throw invalid(tool, given, "backslashes are not path separators here; use '/'");
  if (/^[A-Za-z]:/.test(given)) throw invalid(tool, given, "drive letters are not paths here");
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(given)) throw invalid(tool, given, "URLs are not paths");
  if (given.startsWith("~")) throw invalid(tool, given, "'~' is not expanded; use a workspace path");
  if (/%[0-9A-Fa-f]{2}/.test(given)) throw invalid(tool, given, "URL-encoded characters are not decoded");
  if (SLASH_LOOK_ALIKES.test(given))
    throw invalid(tool, given, "the path contains a look-alike of '/' or '\\'");
  for (const character of given) {
    if (character.charCodeAt(0) < 0x80) continue;
    if (STRUCTURAL.test(character.normalize("NFKC"))) {
      throw invalid(
        tool,
        given,
        `'${character}' (U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}) is a look-alike of a path character`,
      );
    }
  }
  for (const segment of given.split("/")) {
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) {
      throw invalid(tool, given, `a path segment is longer than ${MAX_SEGMENT_BYTES} bytes`);
    }
  }
  const absolute = given.startsWith("/");
  let normalized = path.posix.normalize(given);
  if (normalized.length > 1 && normalized.endsWith("/")) normalized = normalized.slice(0, -1);
  if (!absolute && (normalized === ".." || normalized.startsWith("../"))) {
    throw new SandboxError(
      `${tool}: '${given}' is outside the sandbox: it climbs out of the workspace with '..'. ` +
        "Use a path inside the workspace, such as 'notes/todo.md'.",
      {
        code: ERROR_CODES.SANDBOX_PATH_OUTSIDE,
        hint: "Paths are relative to the workspace and may not leave it",
      },
    );
  }
  return { given, normalized, absolute };
}

function invalid(tool: string, given: string, reason: string): SandboxError {
  return new SandboxError(
    `${tool}: '${printable(given)}' is not an accepted path: ${reason}. ` +
      "Give a plain path relative to the workspace, with '/' between names, such as 'notes/todo.md'.",
    { code: ERROR_CODES.SANDBOX_INVALID_PATH, hint: "Paths are plain workspace-relative POSIX paths" },
  );
}

/** The path with invisible and control characters shown as escapes, so a message never hides them. */
function printable(text: string): string {
  return text.replace(
    /[\p{Cc}\p{Cf}]/gu,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
