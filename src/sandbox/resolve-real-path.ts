import { lstatSync, readlinkSync, type Stats } from "node:fs";
import path from "node:path";

/** Where a path really leads, symlinks followed, whether or not its last components exist yet. */
export interface RealPath {
  /** Canonical absolute path: each existing component a real directory or file, the missing rest appended. */
  real: string;
  /** Whether the whole path exists. */
  exists: boolean;
  /** `lstat` of `real` when it exists (never a symlink: those were followed). */
  stats: Stats | undefined;
  /** The deepest existing ancestor of `real` (its parent when it exists). */
  existingAncestor: string;
  /** The components below `existingAncestor` that do not exist yet (empty when `real` exists). */
  missing: string[];
}

/** The kernel's own limit on symlinks followed while resolving one path. */
const MAX_SYMLINKS = 40;

/**
 * Resolve an absolute path the way the kernel would, one component at a time, following every symlink —
 * also a dangling one, to where a file created through it would land — and keeping the components that do not
 * exist yet. `fs.realpath` gives up on a missing component; this is "the real path of the nearest existing
 * ancestor" plus the rest. Throws the filesystem's error (`ENOTDIR`, `EACCES`) or `ELOOP` after 40
 * symlinks.
 *
 * `from`, when given, is a canonical directory (a sandbox root's real path): when `absolute` starts with it,
 * resolution starts there instead of at `/`, sparing an `lstat` per component of the root; otherwise at `/`. A root
 * swapped after it was resolved is caught where it matters, by the verified open (`open-verified.ts`).
 */
export async function resolveRealPath(absolute: string, from?: string): Promise<RealPath> {
  // The rest is cut off as a string, never `path.relative`d: that would undo `..` lexically, not as the kernel does.
  const start =
    from !== undefined &&
    (absolute === from || absolute.startsWith(from.endsWith(path.sep) ? from : from + path.sep))
      ? from
      : path.parse(absolute).root;
  let current = start;
  const pending = absolute.slice(start.length).split(path.sep).reverse();
  const missing: string[] = [];
  let links = 0;
  // The lstat of `current` when the last step landed on an existing non-symlink: the final one needs no other.
  let currentStats: Stats | undefined;
  while (pending.length > 0) {
    const segment = pending.pop()!;
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (missing.length > 0) missing.pop();
      else current = path.dirname(current);
      currentStats = undefined;
      continue;
    }
    if (missing.length > 0) {
      missing.push(segment);
      continue;
    }
    const next = path.join(current, segment);
    let stats: Stats;
    try {
      stats = lstatSync(next);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      missing.push(segment);
      continue;
    }
    if (!stats.isSymbolicLink()) {
      current = next;
      currentStats = stats;
      continue;
    }
    currentStats = undefined;
    if (++links > MAX_SYMLINKS) {
      throw Object.assign(new Error(`too many symbolic links in ${absolute}`), { code: "ELOOP" });
    }
    const target = readlinkSync(next);
    if (path.isAbsolute(target)) current = path.parse(target).root;
    const targetSegments = target.split(path.sep);
    for (let index = targetSegments.length - 1; index >= 0; index--) pending.push(targetSegments[index]!);
  }
  if (missing.length > 0) {
    return {
      real: path.join(current, ...missing),
      exists: false,
      stats: undefined,
      existingAncestor: current,
      missing,
    };
  }
  return {
    real: current,
    exists: true,
    stats: currentStats ?? lstatSync(current),
    existingAncestor: path.dirname(current),
    missing,
  };
}
