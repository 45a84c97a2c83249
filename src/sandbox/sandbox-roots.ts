import { mkdir, realpath } from "node:fs/promises";
import path from "node:path";
import { SandboxError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { isPathWithin, relativeSegments } from "./is-path-within.js";

export type SandboxMode = "ro" | "rw";

/** A root as configured: an absolute path and whether the agent may change what is under it. */
export interface SandboxRootOptions {
  path: string;
  mode: SandboxMode;
}

/** A canonical root of the sandbox. */
export interface SandboxRoot {
  readonly real: string;
  readonly mode: SandboxMode;
  /** The first root: where relative paths resolve, shown to the model as `.`. */
  readonly primary: boolean;
}

/** Resolve the roots to their canonical paths (creating a missing read-write one when asked). */
export async function resolveSandboxRoots(
  configured: readonly SandboxRootOptions[],
  createMissing: boolean,
): Promise<SandboxRoot[]> {
  if (configured.length === 0) throw new TypeError("A sandbox needs at least one root");
  const roots: SandboxRoot[] = [];
  for (const [index, root] of configured.entries()) {
    if (!path.isAbsolute(root.path)) throw new TypeError(`Sandbox root '${root.path}' must be absolute`);
    roots.push({
      real: await realRoot(root, createMissing),
      mode: root.mode,
      primary: index === 0,
    });
  }
  return roots;
}

/** The most specific root holding a canonical path. */
export function rootOf(roots: readonly SandboxRoot[], real: string): SandboxRoot | undefined {
  let best: SandboxRoot | undefined;
  for (const root of roots) {
    if (isPathWithin(root.real, real) && (best === undefined || root.real.length > best.real.length)) {
      best = root;
    }
  }
  return best;
}

/** The path the model is shown for a canonical path under a root. */
export function displayPath(roots: readonly SandboxRoot[], real: string): string {
  const root = rootOf(roots, real);
  if (root === undefined || !root.primary) return real;
  const segments = relativeSegments(root.real, real);
  return segments.length === 0 ? "." : segments.join("/");
}

/** What the model may touch, in its own terms. */
export function describeAllowed(roots: readonly SandboxRoot[]): string {
  const others = roots
    .filter((root) => !root.primary)
    .map((root) => `${root.real} (${root.mode === "rw" ? "read-write" : "read-only"})`);
  const primary = roots[0]!;
  return (
    `Allowed: paths relative to the workspace (${primary.mode === "rw" ? "read-write" : "read-only"})` +
    (others.length > 0 ? `, and under ${others.join(", ")}` : "") +
    "."
  );
}

async function realRoot(root: SandboxRootOptions, create: boolean): Promise<string> {
  let failure: NodeJS.ErrnoException;
  try {
    return await realpath(root.path);
  } catch (error) {
    failure = error as NodeJS.ErrnoException;
  }
  if (failure.code === "ENOENT" && create && root.mode === "rw") {
    try {
      await mkdir(root.path, { recursive: true });
      return await realpath(root.path);
    } catch (error) {
      failure = error as NodeJS.ErrnoException;
    }
  }
  // The model sees the message; the host path goes to the hint and the context, for people.
  throw new SandboxError(
    `A ${root.mode === "rw" ? "read-write" : "read-only"} root of the sandbox is not available (${failure.code ?? "error"}); ` +
      "no file can be used there until it is fixed.",
    {
      code: ERROR_CODES.SANDBOX_ROOT_MISSING,
      hint: `Create '${root.path}' or fix sandbox.roots in the agent's config`,
      context: { root: root.path },
      cause: failure,
    },
  );
}
