import { constants, existsSync, fstatSync, readlinkSync, type Stats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import path from "node:path";
import type { FileStats } from "./file-stats.js";

const PROC_FD = "/proc/self/fd";

// Absent on Windows; there the checks after the open are what remains.
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const NOCTTY = constants.O_NOCTTY ?? 0;
const DIRECTORY = constants.O_DIRECTORY ?? 0;

/** Flags for opening a file the sandbox checked: never through a final symlink, never waiting on a FIFO. */
export const OPEN_FLAGS = {
  read: constants.O_RDONLY | NOFOLLOW | NONBLOCK | NOCTTY,
  write: constants.O_WRONLY | NOFOLLOW | NONBLOCK | NOCTTY,
  create: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW | NONBLOCK | NOCTTY,
  append: constants.O_WRONLY | constants.O_APPEND | NOFOLLOW | NONBLOCK | NOCTTY,
  directory: constants.O_RDONLY | DIRECTORY | NOFOLLOW | NONBLOCK,
} as const;

/** Whether `/proc/self/fd` can stand in for `openat(2)`: Linux with procfs mounted. */
export function procFdAvailable(): boolean {
  return process.platform === "linux" && existsSync(PROC_FD);
}

/** Thrown when what was opened is not what was checked: a symlink or another file was swapped in between. */
export class PathChangedError extends Error {
  readonly code = "KEEL_PATH_CHANGED";
}

/**
 * Whether two stats are of the same file: device and inode, and — since a freed inode number is soon given to
 * a new file — the same birth time where the filesystem records one.
 */
export function sameFile(a: FileStats, b: FileStats): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.birthtimeMs === b.birthtimeMs;
}

/** A file opened and verified to be the checked one, with its `fstat` from the verification. */
export interface VerifiedFile {
  readonly handle: FileHandle;
  readonly stats: Stats;
}

/** How to open a file, and the `lstat` the check saw of it (undefined for a file about to be created). */
export interface OpenRequest {
  readonly flags: number;
  readonly expected: FileStats | undefined;
}

/** A directory opened and verified to be the checked one; files are opened relative to it. */
export interface OpenDirectory {
  readonly handle: FileHandle;
  readonly real: string;
}

/**
 * Opens what the sandbox checked and proves it is what was checked. Node has no `openat(2)`; on Linux
 * `/proc/self/fd/<dir>/<name>` is one: the directory is opened with `O_NOFOLLOW` and its kernel path compared
 * with the checked one, then the file is opened *inside that open directory* with `O_NOFOLLOW`, so no
 * component of the path can be swapped for a symlink between check and open. Elsewhere the file is opened by
 * its full path with `O_NOFOLLOW` and its device and inode compared with the ones seen at the check — which
 * catches a swapped existing file but not a parent directory swapped before a new file is created.
 */
export class VerifiedOpener {
  constructor(readonly useProcFd: boolean) {}

  /** Open the directory at `real` (a canonical path) and make sure it is the one `expected` describes. */
  async openDirectory(real: string, expected: FileStats | undefined): Promise<OpenDirectory> {
    const handle = await this.openOrChanged(real, OPEN_FLAGS.directory);
    try {
      this.verify(handle, real, expected);
      return { handle, real };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Open `name` in an opened directory, refusing a symlink there and, for an existing file, a different one. */
  async openIn(directory: OpenDirectory, name: string, request: OpenRequest): Promise<VerifiedFile> {
    const { flags, expected } = request;
    const handle = await this.openOrChanged(this.pathIn(directory, name), flags);
    try {
      return { handle, stats: this.verify(handle, path.join(directory.real, name), expected) };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Open a file by its full canonical path with `O_NOFOLLOW` (without procfs); for an existing file, the same one. */
  async openPath(real: string, request: OpenRequest): Promise<VerifiedFile> {
    const { flags, expected } = request;
    const handle = await this.openOrChanged(real, flags);
    try {
      return { handle, stats: this.verify(handle, real, expected) };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The path that reaches `name` inside the opened directory (for `lstat`, `opendir`, `mkdir`, `unlink`). */
  pathIn(directory: OpenDirectory, name: string): string {
    return this.useProcFd ? `${PROC_FD}/${directory.handle.fd}/${name}` : path.join(directory.real, name);
  }

  /** The path of an opened directory itself. */
  pathOf(directory: OpenDirectory): string {
    return this.useProcFd ? `${PROC_FD}/${directory.handle.fd}` : directory.real;
  }

  private async openOrChanged(target: string, flags: number): Promise<FileHandle> {
    try {
      return await open(target, flags, 0o644);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // ELOOP: a symlink where the check saw none (O_NOFOLLOW). EEXIST: a file where the check saw none.
      // ENOENT: what the check saw (the file, or the directory of a new one) is gone.
      if (
        code === "ELOOP" ||
        code === "EEXIST" ||
        code === "ENOENT" ||
        (code === "ENOTDIR" && (flags & DIRECTORY) !== 0)
      ) {
        throw new PathChangedError(`${code} on ${target}`);
      }
      throw error;
    }
  }

  /** The opened file's `fstat`, once it is shown to be the checked one. */
  private verify(handle: FileHandle, real: string, expected: FileStats | undefined): Stats {
    // Synchronous on purpose: each asks the kernel about an open descriptor (a few µs), where a trip to the
    // thread pool costs tens (decision 0004).
    const stats = fstatSync(handle.fd);
    const actual = this.useProcFd ? readlinkSync(`${PROC_FD}/${handle.fd}`) : undefined;
    if (expected !== undefined && !sameFile(stats, expected)) {
      throw new PathChangedError(`${real} is another file than the one checked`);
    }
    if (actual !== undefined && actual !== real)
      throw new PathChangedError(`${real} was opened as ${actual}`);
    return stats;
  }
}
