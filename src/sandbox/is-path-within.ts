import path from "node:path";

/**
 * Whether `candidate` is `root` or lies under it, comparing whole path segments: `/ws-evil` is not inside
 * `/ws`, which a string-prefix check gets wrong. Both paths must be absolute and canonical (no `.`, `..` or
 * symlinks); the comparison is exact, so on a case-insensitive filesystem a case variant of a root counts as
 * outside — a refusal, never an escape.
 */
export function isPathWithin(root: string, candidate: string): boolean {
  const rootSegments = segmentsOf(root);
  const candidateSegments = segmentsOf(candidate);
  if (candidateSegments.length < rootSegments.length) return false;
  for (let index = 0; index < rootSegments.length; index++) {
    if (rootSegments[index] !== candidateSegments[index]) return false;
  }
  return true;
}

/** The segments of `candidate` below `root` (empty for the root itself); assumes {@link isPathWithin}. */
export function relativeSegments(root: string, candidate: string): string[] {
  return segmentsOf(candidate).slice(segmentsOf(root).length);
}

function segmentsOf(absolute: string): string[] {
  return absolute.split(path.sep).filter((segment) => segment !== "");
}
