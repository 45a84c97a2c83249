import { lstatSync } from "node:fs";
import type { FileStats } from "./file-stats.js";

export type EntryType = "file" | "directory" | "symlink" | "other";

export interface ListEntry {
  path: string;
  type: EntryType;
  /** Bytes, for files. */
  size?: number;
}

/** A file a walk visits: its bytes (bounded), or why it was skipped. */
export type WalkedFile = { path: string; content: Uint8Array } | { path: string; skipped: string };

export function entryType(stats: FileStats): EntryType {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  if (stats.isSymbolicLink()) return "symlink";
  return "other";
}

/** What a file that is neither regular nor a directory is, in words. */
export function specialKind(stats: FileStats): string {
  if (stats.isFIFO()) return "FIFO";
  if (stats.isSocket()) return "socket";
  if (stats.isCharacterDevice()) return "character device";
  if (stats.isBlockDevice()) return "block device";
  if (stats.isSymbolicLink()) return "symbolic link";
  return "special file";
}

/** Why a walk does not read a file, or undefined when it does. */
export function skipReason(stats: FileStats, maxFileBytes: number): string | undefined {
  if (stats.isSymbolicLink()) return "symbolic link (not followed)";
  if (!stats.isFile()) return specialKind(stats);
  if (stats.nlink > 1) return "has more than one hard link";
  if (stats.size > maxFileBytes) return `larger than ${maxFileBytes} bytes`;
  return undefined;
}

/** An entry's display path under its directory's. */
export function joinDisplay(parent: string, name: string): string {
  return parent === "." ? name : `${parent}/${name}`;
}

/**
 * `lstat` of a listed name, or undefined when it went away meanwhile. Synchronous like the path checks: a few µs
 * against tens for a trip to the thread pool per entry (decision 0004).
 */
export function lstatOrUndefined(target: string): FileStats | undefined {
  try {
    return lstatSync(target);
  } catch {
    return undefined;
  }
}
