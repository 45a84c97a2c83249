import { lstat, mkdir, opendir, unlink } from "node:fs/promises";
import path from "node:path";
import { SandboxError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import {
  assertAllowedType,
  assertDirectory,
  assertFile,
  type CheckedPath,
  checkPath,
  type SandboxAccess,
} from "./checked-path.js";
import {
  entryType,
  joinDisplay,
  type ListEntry,
  lstatOrUndefined,
  skipReason,
  type WalkedFile,
} from "./directory-entries.js";
import type { FileStats } from "./file-stats.js";
import {
  OPEN_FLAGS,
  type OpenDirectory,
  procFdAvailable,
  sameFile,
  type VerifiedFile,
  VerifiedOpener,
} from "./open-verified.js";
import { readAt, utf8Boundary } from "./read-at.js";
import { resolveRealPath } from "./resolve-real-path.js";
import { fsFailure, isDirectory, notFound, pathChanged } from "./sandbox-errors.js";
import { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from "./sandbox-limits.js";
import {
  describeAllowed,
  displayPath,
  resolveSandboxRoots,
  type SandboxRoot,
  type SandboxRootOptions,
} from "./sandbox-roots.js";

export interface SandboxOptions {
  /** The roots, absolute; relative paths the model gives resolve against the first. */
  roots: readonly SandboxRootOptions[];
  limits?: Partial<SandboxLimits>;
  /** Create read-write roots that do not exist yet (a run's fresh workspace). Default false. */
  createMissingRoots?: boolean;
  /** Open through `/proc/self/fd` (race-free, Linux). Default: wherever procfs is there. */
  useProcFd?: boolean;
  /**
   * Called after a path passed its check and before anything is opened. A seam for tests, which swap files in
   * this window to prove the open refuses what the check did not see.
   */
  beforeOpen?: (target: CheckedPath) => void | Promise<void>;
}

export interface ReadResult {
  path: string;
  content: string;
  offset: number;
  bytesRead: number;
  totalBytes: number;
  truncated: boolean;
  /** Where the next read continues when `truncated`. */
  nextOffset?: number;
  /** The bytes hold NUL characters; `content` is left empty rather than filled with mojibake. */
  binary?: boolean;
}

export interface WriteResult {
  path: string;
  bytesWritten: number;
  totalBytes: number;
  created: boolean;
  mode: "w" | "a";
}

/**
 * The filesystem sandbox. Every path is checked — syntactically, then resolved with all symlinks
 * followed and compared with the roots segment by segment — and every open re-proves that it opened what was
 * checked (`VerifiedOpener`). Devices, FIFOs, sockets and files with more than one hard link are refused;
 * reads, writes and listings are bounded. Refusals are `SandboxError`s whose messages name only the path the
 * model gave and what is allowed.
 */
export class Sandbox {
  readonly roots: readonly SandboxRoot[];
  readonly limits: Readonly<SandboxLimits>;
  private readonly opener: VerifiedOpener;
  private readonly beforeOpen: SandboxOptions["beforeOpen"];

  private constructor(roots: SandboxRoot[], options: SandboxOptions) {
    this.roots = roots;
    this.limits = Object.freeze({ ...DEFAULT_SANDBOX_LIMITS, ...options.limits });
    this.opener = new VerifiedOpener(options.useProcFd ?? procFdAvailable());
    this.beforeOpen = options.beforeOpen;
  }

  /** Resolve the roots to their canonical paths (creating a missing read-write one when asked). */
  static async create(options: SandboxOptions): Promise<Sandbox> {
    const roots = await resolveSandboxRoots(options.roots, options.createMissingRoots ?? false);
    return new Sandbox(roots, options);
  }

  /** Whether opens go through `/proc/self/fd` (race-free) on this sandbox. */
  get raceFree(): boolean {
    return this.opener.useProcFd;
  }

  /**
   * Check a path for one kind of access without opening it: the decision alone, for a policy to consult.
   * Throws a `SandboxError` for a refusal, a `ToolError` (`fs.*`) when the path cannot be resolved.
   */
  check(input: unknown, access: SandboxAccess, tool: string): Promise<CheckedPath> {
    return checkPath(this.roots, input, { access, tool });
  }

  /** Read at most `limit` (and `maxReadBytes`) bytes from `offset`; `truncated` says whether more remain. */
  async readFile(
    input: unknown,
    options: { tool: string; offset?: number; limit?: number },
  ): Promise<ReadResult> {
    const { tool } = options;
    const checked = await this.check(input, "read", tool);
    assertFile(checked, tool);
    await this.beforeOpen?.(checked);
    const { handle, stats } = await this.openFile(checked, OPEN_FLAGS.read, tool);
    try {
      assertAllowedType(stats, checked, tool);
      const totalBytes = stats.size;
      const start = Math.min(Math.max(0, options.offset ?? 0), totalBytes);
      const cap = Math.min(options.limit ?? this.limits.maxReadBytes, this.limits.maxReadBytes);
      const buffer = await readAt(handle, start, Math.min(cap, totalBytes - start));
      const truncated = start + buffer.length < totalBytes;
      const binary = buffer.includes(0);
      const end = truncated && !binary ? utf8Boundary(buffer) : buffer.length;
      const result: ReadResult = {
        path: checked.display,
        content: binary ? "" : buffer.toString("utf8", 0, end),
        offset: start,
        bytesRead: end,
        totalBytes,
        truncated,
      };
      if (truncated) result.nextOffset = start + end;
      if (binary) result.binary = true;
      return result;
    } finally {
      // Nothing was written through it: the result does not wait for the close.
      handle.close().catch(() => undefined);
    }
  }

  /** Write (`w`, replacing) or append (`a`) UTF-8 text, creating the file and its directories as needed. */
  async writeFile(
    input: unknown,
    content: string,
    options: { tool: string; mode?: "w" | "a" },
  ): Promise<WriteResult> {
    const { tool } = options;
    const mode = options.mode ?? "w";
    const checked = await this.check(input, "write", tool);
    const bytes = Buffer.from(content, "utf8");
    if (bytes.length > this.limits.maxWriteBytes) {
      throw new SandboxError(
        `${tool}: ${bytes.length} bytes is more than one write may carry (${this.limits.maxWriteBytes}); ` +
          "write the content in parts with mode 'a'.",
        { code: ERROR_CODES.SANDBOX_TOO_LARGE, hint: "Raise sandbox.max_write_bytes to allow larger writes" },
      );
    }
    if (checked.exists && checked.stats!.isDirectory()) throw isDirectory(tool, checked.given);
    await this.beforeOpen?.(checked);
    let opened: VerifiedFile;
    if (checked.exists) {
      opened = await this.openFile(checked, mode === "a" ? OPEN_FLAGS.append : OPEN_FLAGS.write, tool);
    } else {
      await this.makeParents(checked, tool);
      opened = await this.openFile(checked, OPEN_FLAGS.create, tool);
    }
    const { handle, stats } = opened;
    try {
      assertAllowedType(stats, checked, tool);
      if (!checked.exists && !this.opener.useProcFd) await this.assertCreatedInPlace(stats, checked, tool);
      if (mode === "w" && checked.exists) await handle.truncate(0);
      let written = 0;
      while (written < bytes.length) {
        const position = mode === "a" ? null : written;
        const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, position);
        written += bytesWritten;
      }
      // Replaced from its start, the file is what was written; an append asks, since others may append too.
      const totalBytes = mode === "w" ? written : (await handle.stat()).size;
      return { path: checked.display, bytesWritten: written, totalBytes, created: !checked.exists, mode };
    } finally {
      await handle.close();
    }
  }

  /** Delete one file (never a directory); the name is removed inside the verified directory. */
  async deleteFile(input: unknown, options: { tool: string }): Promise<{ path: string }> {
    const { tool } = options;
    const checked = await this.check(input, "delete", tool);
    assertFile(checked, tool);
    await this.beforeOpen?.(checked);
    const directory = await this.openDirectory({ real: path.dirname(checked.real) }, checked, tool);
    try {
      const target = this.opener.pathIn(directory, path.basename(checked.real));
      const stats = await lstat(target).catch((error: unknown) => {
        throw fsFailure(error, tool, checked.given);
      });
      if (!stats.isFile() || !sameFile(stats, checked.stats!)) throw pathChanged(tool, checked.given);
      await unlink(target).catch((error: unknown) => {
        throw fsFailure(error, tool, checked.given);
      });
      return { path: checked.display };
    } finally {
      await directory.handle.close();
    }
  }

  /** List a directory (recursively when asked), never following symlinks, at most `maxListEntries` entries. */
  async listDirectory(
    input: unknown,
    options: { tool: string; recursive?: boolean; maxEntries?: number },
  ): Promise<{ path: string; entries: ListEntry[]; truncated: boolean }> {
    const { tool } = options;
    const max = Math.min(options.maxEntries ?? this.limits.maxListEntries, this.limits.maxListEntries);
    const checked = await this.check(input, "list", tool);
    assertDirectory(checked, tool);
    await this.beforeOpen?.(checked);
    const entries: ListEntry[] = [];
    const pending = [{ real: checked.real, stats: checked.stats!, display: checked.display }];
    let truncated = false;
    while (pending.length > 0 && !truncated) {
      const current = pending.shift()!;
      const directory = await this.openDirectory(current, checked, tool);
      try {
        for await (const entry of await opendir(this.opener.pathOf(directory))) {
          if (entries.length >= max) {
            truncated = true;
            break;
          }
          const stats = lstatOrUndefined(this.opener.pathIn(directory, entry.name));
          if (stats === undefined) continue;
          const listed: ListEntry = {
            path: joinDisplay(current.display, entry.name),
            type: entryType(stats),
          };
          if (stats.isFile()) listed.size = stats.size;
          entries.push(listed);
          if (options.recursive && stats.isDirectory()) {
            pending.push({ real: path.join(current.real, entry.name), stats, display: listed.path });
          }
        }
      } finally {
        await directory.handle.close();
      }
    }
    entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { path: checked.display, entries, truncated };
  }

  /**
   * The regular files under a path (or the file itself), depth first, each read whole when it has at most
   * `maxFileBytes` bytes. Symlinks are not followed; special files, hard-linked files and larger files are
   * reported as skipped. Stop early by leaving the loop.
   */
  async *walkFiles(
    input: unknown,
    options: { tool: string; maxFileBytes: number },
  ): AsyncGenerator<WalkedFile, void, undefined> {
    const { tool } = options;
    const checked = await this.check(input, "read", tool);
    if (!checked.exists) throw notFound(tool, checked.given);
    if (!checked.stats!.isDirectory()) {
      yield await this.walkedFile(checked, options);
      return;
    }
    await this.beforeOpen?.(checked);
    const pending = [{ real: checked.real, stats: checked.stats!, display: checked.display }];
    while (pending.length > 0) {
      const current = pending.pop()!;
      const directory = await this.openDirectory(current, checked, tool);
      try {
        const names: string[] = [];
        for await (const entry of await opendir(this.opener.pathOf(directory))) names.push(entry.name);
        names.sort();
        const subdirectories: typeof pending = [];
        for (const name of names) {
          const display = joinDisplay(current.display, name);
          const stats = lstatOrUndefined(this.opener.pathIn(directory, name));
          if (stats === undefined) continue;
          if (stats.isDirectory()) {
            subdirectories.push({ real: path.join(current.real, name), stats, display });
            continue;
          }
          const skipped = skipReason(stats, options.maxFileBytes);
          if (skipped !== undefined) {
            yield { path: display, skipped };
            continue;
          }
          const file = await this.opener
            .openIn(directory, name, { flags: OPEN_FLAGS.read, expected: stats })
            .catch(() => undefined);
          if (file === undefined) {
            yield { path: display, skipped: "changed while it was opened" };
            continue;
          }
          try {
            const late = skipReason(file.stats, options.maxFileBytes);
            yield late === undefined
              ? { path: display, content: await readAt(file.handle, 0, file.stats.size) }
              : { path: display, skipped: late };
          } finally {
            await file.handle.close();
          }
        }
        // Popped last first: pushed in reverse, the subdirectories are visited in name order.
        pending.push(...subdirectories.reverse());
      } finally {
        await directory.handle.close();
      }
    }
  }

  /** The path the model is shown for a canonical path under a root. */
  display(real: string): string {
    return displayPath(this.roots, real);
  }

  /** What the model may touch, in its own terms. */
  allowed(): string {
    return describeAllowed(this.roots);
  }

  private async openFile(checked: CheckedPath, flags: number, tool: string): Promise<VerifiedFile> {
    const request = { flags, expected: checked.stats };
    try {
      if (!this.opener.useProcFd) return await this.opener.openPath(checked.real, request);
      const directory = await this.opener.openDirectory(path.dirname(checked.real), undefined);
      try {
        return await this.opener.openIn(directory, path.basename(checked.real), request);
      } finally {
        // The file is open: the directory's handle has done its work, and its close need not be waited for.
        directory.handle.close().catch(() => undefined);
      }
    } catch (error) {
      throw fsFailure(error, tool, checked.given);
    }
  }

  /** Open a directory on the way to `checked`: its canonical path and, when the check saw it, its `lstat`. */
  private async openDirectory(
    directory: { real: string; stats?: FileStats | undefined },
    checked: CheckedPath,
    tool: string,
  ): Promise<OpenDirectory> {
    try {
      return await this.opener.openDirectory(directory.real, directory.stats);
    } catch (error) {
      throw fsFailure(error, tool, checked.given);
    }
  }

  /** Make the missing directories above a new file, each inside the one verified before it. */
  private async makeParents(checked: CheckedPath, tool: string): Promise<void> {
    const parents = checked.missing.slice(0, -1);
    let current = checked.existingAncestor;
    for (const name of parents) {
      const directory = await this.openDirectory({ real: current }, checked, tool);
      try {
        await mkdir(this.opener.pathIn(directory, name), 0o755);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") throw pathChanged(tool, checked.given);
        throw fsFailure(error, tool, checked.given);
      } finally {
        await directory.handle.close();
      }
      current = path.join(current, name);
    }
  }

  /**
   * Without procfs a new file is opened by its full path: make sure it landed where the check said. If a
   * directory on the way was swapped for a symlink, the empty file this call just created (`O_EXCL`: ours
   * alone) is removed again from wherever it landed.
   */
  private async assertCreatedInPlace(stats: FileStats, checked: CheckedPath, tool: string): Promise<void> {
    const landed = await resolveRealPath(checked.real).catch(() => undefined);
    const ours = landed?.stats !== undefined && sameFile(landed.stats, stats);
    if (ours && landed.real === checked.real) return;
    if (ours) await unlink(landed.real).catch(() => undefined);
    throw pathChanged(tool, checked.given);
  }

  /** A walk of a path that is one file: the file itself, read whole when it is small enough. */
  private async walkedFile(
    checked: CheckedPath,
    options: { tool: string; maxFileBytes: number },
  ): Promise<WalkedFile> {
    const { tool, maxFileBytes } = options;
    const skipped = skipReason(checked.stats!, maxFileBytes);
    if (skipped !== undefined) return { path: checked.display, skipped };
    await this.beforeOpen?.(checked);
    const { handle, stats: opened } = await this.openFile(checked, OPEN_FLAGS.read, tool);
    try {
      assertAllowedType(opened, checked, tool);
      return { path: checked.display, content: await readAt(handle, 0, Math.min(opened.size, maxFileBytes)) };
    } finally {
      await handle.close();
    }
  }
}
