import path from "node:path";
import { SandboxError, ToolError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { checkPathInput } from "./check-path-input.js";
import { specialKind } from "./directory-entries.js";
import type { FileStats } from "./file-stats.js";
import { resolveRealPath } from "./resolve-real-path.js";
import { fsFailure, isDirectory, notFound } from "./sandbox-errors.js";
import { describeAllowed, displayPath, rootOf, type SandboxRoot } from "./sandbox-roots.js";

export type SandboxAccess = "read" | "list" | "write" | "delete";

/** A path that passed the sandbox's checks for one kind of access. */
export interface CheckedPath {
  /** What the model wrote. */
  readonly given: string;
  /** The path shown back to the model: relative to the workspace, or absolute under another root. */
  readonly display: string;
  /** The canonical host path; never shown to the model. */
  readonly real: string;
  readonly root: SandboxRoot;
  readonly access: SandboxAccess;
  readonly exists: boolean;
  /** `lstat` at the check, when it exists: what the open must find again. */
  readonly stats: FileStats | undefined;
  readonly existingAncestor: string;
  readonly missing: readonly string[];
}

/**
 * Check a path for one kind of access against the roots without opening it: syntactically, then resolved with
 * every symlink followed and compared with the roots. Throws a `SandboxError` for a refusal, a `ToolError`
 * (`fs.*`) when the path cannot be resolved.
 */
export async function checkPath(
  roots: readonly SandboxRoot[],
  input: unknown,
  want: { access: SandboxAccess; tool: string },
): Promise<CheckedPath> {
  const { access, tool } = want;
  const parsed = checkPathInput(input, tool);
  const primary = roots[0]!;
  const lexical = parsed.absolute ? parsed.normalized : path.join(primary.real, parsed.normalized);
  let resolved: Awaited<ReturnType<typeof resolveRealPath>>;
  try {
    // A path lexically under a root resolves from the root's real path (known canonical) onwards.
    resolved = await resolveRealPath(lexical, rootOf(roots, lexical)?.real);
  } catch (error) {
    throw fsFailure(error, tool, parsed.given);
  }
  const root = rootOf(roots, resolved.real);
  if (root === undefined) {
    const throughSymlink = rootOf(roots, lexical) !== undefined;
    throw new SandboxError(
      `${tool}: '${parsed.given}' is outside the sandbox` +
        (throughSymlink ? " (a symbolic link on the way leads out of it)" : "") +
        `. ${describeAllowed(roots)}`,
      { code: ERROR_CODES.SANDBOX_PATH_OUTSIDE, hint: "Only paths under the sandbox roots are allowed" },
    );
  }
  if ((access === "write" || access === "delete") && root.mode !== "rw") {
    throw new SandboxError(
      `${tool}: '${parsed.given}' is read-only; it cannot be written or deleted. ${describeAllowed(roots)}`,
      { code: ERROR_CODES.SANDBOX_READ_ONLY, hint: "Write under a root whose mode is 'rw'" },
    );
  }
  const checked: CheckedPath = {
    given: parsed.given,
    display: displayPath(roots, resolved.real),
    real: resolved.real,
    root,
    access,
    exists: resolved.exists,
    stats: resolved.stats,
    existingAncestor: resolved.existingAncestor,
    missing: resolved.missing,
  };
  if (resolved.stats !== undefined) assertAllowedType(resolved.stats, checked, tool);
  return checked;
}

/** Regular files (with one hard link) and directories pass; anything else is refused. */
export function assertAllowedType(stats: FileStats, checked: CheckedPath, tool: string): void {
  if (stats.isFile() || stats.isDirectory()) {
    if (stats.isFile() && stats.nlink > 1) {
      throw new SandboxError(
        `${tool}: '${checked.given}' has ${stats.nlink} hard links; such a file may be shared with one ` +
          "outside the sandbox, so it is not opened.",
        {
          code: ERROR_CODES.SANDBOX_HARD_LINK,
          hint: "Copy the file into the workspace instead of linking it",
        },
      );
    }
    return;
  }
  throw new SandboxError(
    `${tool}: '${checked.given}' is a ${specialKind(stats)}, not a regular file; it is not opened.`,
    { code: ERROR_CODES.SANDBOX_SPECIAL_FILE, hint: "Only regular files and directories can be used" },
  );
}

export function assertFile(checked: CheckedPath, tool: string): void {
  if (!checked.exists) throw notFound(tool, checked.given);
  if (checked.stats!.isDirectory()) throw isDirectory(tool, checked.given);
}

export function assertDirectory(checked: CheckedPath, tool: string): void {
  if (!checked.exists) throw notFound(tool, checked.given);
  if (!checked.stats!.isDirectory()) {
    throw new ToolError(`${tool}: '${checked.given}' is not a directory`, {
      code: ERROR_CODES.FS_NOT_DIRECTORY,
    });
  }
}
