// Long because the sandbox is one guarded procedure per operation: check, open verified, bound; kept in one place.
import { lstatSync, type Stats } from "node:fs";
import { type FileHandle, lstat, mkdir, opendir, realpath, unlink } from "node:fs/promises";
import path from "node:path";
import { SandboxError, ToolError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { checkPathInput } from "./check-path-input.js";
import { isPathWithin, relativeSegments } from "./is-path-within.js";
import {
  OPEN_FLAGS,
  type OpenDirectory,
  PathChangedError,
  procFdAvailable,
  sameFile,
  type VerifiedFile,
  VerifiedOpener,
} from "./open-verified.js";
import { resolveRealPath } from "./resolve-real-path.js";

export type SandboxMode = "ro" | "rw";
export type SandboxAccess = "read" | "list" | "write" | "delete";

/** A root as configured: an absolute path and whether the agent may change what is under it. */
export interface SandboxRootOptions {
  path: string;
  mode: SandboxMode;
}

/** Bounds on what one call may read, write or list. */
export interface SandboxLimits {
  /** Most bytes one read returns (`max_read_bytes`, default 1 MiB). */
  maxReadBytes: number;
  /** Most bytes one write may carry (`max_write_bytes`, default 1 MiB). */
  maxWriteBytes: number;
  /** Most entries one listing returns (`max_list_entries`, default 1000). */
  maxListEntries: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  maxReadBytes: 1024 * 1024,
  maxWriteBytes: 1024 * 1024,
  maxListEntries: 1000,
});

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

/** A canonical root of the sandbox. */
export interface SandboxRoot {
  readonly real: string;
  readonly mode: SandboxMode;
  /** The first root: where relative paths resolve, shown to the model as `.`. */
  readonly primary: boolean;
}

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
  readonly stats: Stats | undefined;
  readonly existingAncestor: string;
  readonly missing: readonly string[];
}

export type EntryType = "file" | "directory" | "symlink" | "other";

export interface ListEntry {
  path: string;
  type: EntryType;
  /** Bytes, for files. */
  size?: number;
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

/** A file a walk visits: its bytes (bounded), or why it was skipped. */
export type WalkedFile = { path: string; content: Buffer } | { path: string; skipped: string };

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
    if (options.roots.length === 0) throw new TypeError("A sandbox needs at least one root");
    const roots: SandboxRoot[] = [];
    for (const [index, root] of options.roots.entries()) {
      if (!path.isAbsolute(root.path)) throw new TypeError(`Sandbox root '${root.path}' must be absolute`);
      roots.push({
        real: await realRoot(root, options.createMissingRoots ?? false),
        mode: root.mode,
        primary: index === 0,
      });
    }
    return new Sandbox(roots, options);
  }

  /** Whether opens go through `/proc/self/fd` (race-free) on this sandbox. */
  get raceFree(): boolean {
    return this.opener.useProcFd;
  }

  /**
   * Check a path for one kind of access without opening it: the decision alone, for a policy to consult
   *. Throws a `SandboxError` for a refusal, a `ToolError` (`fs.*`) when the path cannot be resolved.
   */
  async check(input: unknown, access: SandboxAccess, tool: string): Promise<CheckedPath> {
    const parsed = checkPathInput(input, tool);
    const primary = this.roots[0]!;
    const lexical = parsed.absolute ? parsed.normalized : path.join(primary.real, parsed.normalized);
    let resolved: Awaited<ReturnType<typeof resolveRealPath>>;
    try {
      // A path lexically under a root resolves from the root's real path (known canonical) onwards.
      resolved = await resolveRealPath(lexical, this.rootOf(lexical)?.real);
    } catch (error) {
      throw this.failure(error, tool, parsed.given);
    }
    const root = this.rootOf(resolved.real);
    if (root === undefined) {
      const throughSymlink = this.rootOf(lexical) !== undefined;
      throw new SandboxError(
        `${tool}: '${parsed.given}' is outside the sandbox` +
          (throughSymlink ? " (a symbolic link on the way leads out of it)" : "") +
          `. ${this.allowed()}`,
        { code: ERROR_CODES.SANDBOX_PATH_OUTSIDE, hint: "Only paths under the sandbox roots are allowed" },
      );
    }
    if ((access === "write" || access === "delete") && root.mode !== "rw") {
      throw new SandboxError(
        `${tool}: '${parsed.given}' is read-only; it cannot be written or deleted. ${this.allowed()}`,
        { code: ERROR_CODES.SANDBOX_READ_ONLY, hint: "Write under a root whose mode is 'rw'" },
      );
    }
    const checked: CheckedPath = {
      given: parsed.given,
      display: this.display(resolved.real),
      real: resolved.real,
      root,
      access,
      exists: resolved.exists,
      stats: resolved.stats,
      existingAncestor: resolved.existingAncestor,
      missing: resolved.missing,
    };
    if (resolved.stats !== undefined) this.assertAllowedType(resolved.stats, checked, tool);
    return checked;
  }

  /** Read at most `limit` (and `maxReadBytes`) bytes from `offset`; `truncated` says whether more remain. */
  async readFile(
    input: unknown,
    options: { tool: string; offset?: number; limit?: number },
  ): Promise<ReadResult> {
    const { tool } = options;
    const checked = await this.check(input, "read", tool);
    this.assertFile(checked, tool);
    await this.beforeOpen?.(checked);
    const { handle, stats } = await this.openFile(checked, OPEN_FLAGS.read, tool);
    try {
      this.assertAllowedType(stats, checked, tool);
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
      this.assertAllowedType(stats, checked, tool);
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
    this.assertFile(checked, tool);
    await this.beforeOpen?.(checked);
    const directory = await this.openDirectory(path.dirname(checked.real), undefined, checked, tool);
    try {
      const target = this.opener.pathIn(directory, path.basename(checked.real));
      const stats = await lstat(target).catch((error: unknown) => {
        throw this.failure(error, tool, checked.given);
      });
      if (!stats.isFile() || !sameFile(stats, checked.stats!)) throw changed(tool, checked.given);
      await unlink(target).catch((error: unknown) => {
        throw this.failure(error, tool, checked.given);
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
    this.assertDirectory(checked, tool);
    await this.beforeOpen?.(checked);
    const entries: ListEntry[] = [];
    const pending = [{ real: checked.real, stats: checked.stats!, display: checked.display }];
    let truncated = false;
    while (pending.length > 0 && !truncated) {
      const current = pending.shift()!;
      const directory = await this.openDirectory(current.real, current.stats, checked, tool);
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
      yield await this.walkedFile(checked, checked.stats!, options.maxFileBytes, tool);
      return;
    }
    await this.beforeOpen?.(checked);
    const pending = [{ real: checked.real, stats: checked.stats!, display: checked.display }];
    while (pending.length > 0) {
      const current = pending.pop()!;
      const directory = await this.openDirectory(current.real, current.stats, checked, tool);
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
            .openIn(directory, name, OPEN_FLAGS.read, stats)
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
    const root = this.rootOf(real);
    if (root === undefined || !root.primary) return real;
    const segments = relativeSegments(root.real, real);
    return segments.length === 0 ? "." : segments.join("/");
  }

  /** What the model may touch, in its own terms. */
  allowed(): string {
    const others = this.roots
      .filter((root) => !root.primary)
      .map((root) => `${root.real} (${root.mode === "rw" ? "read-write" : "read-only"})`);
    const primary = this.roots[0]!;
    return (
      `Allowed: paths relative to the workspace (${primary.mode === "rw" ? "read-write" : "read-only"})` +
      (others.length > 0 ? `, and under ${others.join(", ")}` : "") +
      "."
    );
  }

  /** The most specific root holding a canonical path. */
  private rootOf(real: string): SandboxRoot | undefined {
    let best: SandboxRoot | undefined;
    for (const root of this.roots) {
      if (isPathWithin(root.real, real) && (best === undefined || root.real.length > best.real.length)) {
        best = root;
      }
    }
    return best;
  }

  private assertAllowedType(stats: Stats, checked: CheckedPath, tool: string): void {
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

  private assertFile(checked: CheckedPath, tool: string): void {
    if (!checked.exists) throw notFound(tool, checked.given);
    if (checked.stats!.isDirectory()) throw isDirectory(tool, checked.given);
  }

  private assertDirectory(checked: CheckedPath, tool: string): void {
    if (!checked.exists) throw notFound(tool, checked.given);
    if (!checked.stats!.isDirectory()) {
      throw new ToolError(`${tool}: '${checked.given}' is not a directory`, {
        code: ERROR_CODES.FS_NOT_DIRECTORY,
      });
    }
  }

  private async openFile(checked: CheckedPath, flags: number, tool: string): Promise<VerifiedFile> {
    try {
      if (!this.opener.useProcFd) return await this.opener.openPath(checked.real, flags, checked.stats);
      const directory = await this.opener.openDirectory(path.dirname(checked.real), undefined);
      try {
        return await this.opener.openIn(directory, path.basename(checked.real), flags, checked.stats);
      } finally {
        // The file is open: the directory's handle has done its work, and its close need not be waited for.
        directory.handle.close().catch(() => undefined);
      }
    } catch (error) {
      throw this.failure(error, tool, checked.given);
    }
  }

  private async openDirectory(
    real: string,
    stats: Stats | undefined,
    checked: CheckedPath,
    tool: string,
  ): Promise<OpenDirectory> {
    try {
      return await this.opener.openDirectory(real, stats);
    } catch (error) {
      throw this.failure(error, tool, checked.given);
    }
  }

  /** Make the missing directories above a new file, each inside the one verified before it. */
  private async makeParents(checked: CheckedPath, tool: string): Promise<void> {
    const parents = checked.missing.slice(0, -1);
    let current = checked.existingAncestor;
    for (const name of parents) {
      const directory = await this.openDirectory(current, undefined, checked, tool);
      try {
        await mkdir(this.opener.pathIn(directory, name), 0o755);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") throw changed(tool, checked.given);
        throw this.failure(error, tool, checked.given);
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
  private async assertCreatedInPlace(stats: Stats, checked: CheckedPath, tool: string): Promise<void> {
    const landed = await resolveRealPath(checked.real).catch(() => undefined);
    const ours = landed?.stats !== undefined && sameFile(landed.stats, stats);
    if (ours && landed.real === checked.real) return;
    if (ours) await unlink(landed.real).catch(() => undefined);
    throw changed(tool, checked.given);
  }

  /** A filesystem error as a typed error whose message holds no host path. */
  private failure(error: unknown, tool: string, given: string): Error {
    if (error instanceof SandboxError || error instanceof ToolError) return error;
    if (error instanceof PathChangedError) return changed(tool, given);
    switch ((error as NodeJS.ErrnoException).code) {
      case "ENOENT":
        return notFound(tool, given);
      case "ENOTDIR":
        return new ToolError(`${tool}: a component of '${given}' is a file, not a directory`, {
          code: ERROR_CODES.FS_NOT_DIRECTORY,
        });
      case "EISDIR":
        return isDirectory(tool, given);
      case "EACCES":
      case "EPERM":
        return new ToolError(`${tool}: the operating system denied access to '${given}'`, {
          code: ERROR_CODES.FS_ACCESS_DENIED,
        });
      case "ELOOP":
        return new SandboxError(`${tool}: '${given}' runs into a loop of symbolic links`, {
          code: ERROR_CODES.SANDBOX_INVALID_PATH,
        });
      case "ENXIO":
        return new SandboxError(`${tool}: '${given}' is a FIFO or socket, not a regular file`, {
          code: ERROR_CODES.SANDBOX_SPECIAL_FILE,
        });
      default:
        return new ToolError(
          `${tool}: '${given}' failed (${(error as NodeJS.ErrnoException).code ?? "unknown error"})`,
          { cause: error },
        );
    }
  }

  private async walkedFile(
    checked: CheckedPath,
    stats: Stats,
    maxFileBytes: number,
    tool: string,
  ): Promise<WalkedFile> {
    const skipped = skipReason(stats, maxFileBytes);
    if (skipped !== undefined) return { path: checked.display, skipped };
    await this.beforeOpen?.(checked);
    const { handle, stats: opened } = await this.openFile(checked, OPEN_FLAGS.read, tool);
    try {
      this.assertAllowedType(opened, checked, tool);
      return { path: checked.display, content: await readAt(handle, 0, Math.min(opened.size, maxFileBytes)) };
    } finally {
      await handle.close();
    }
  }
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

/** Read up to `length` bytes at `position`, looping over short reads. */
async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, length));
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === buffer.length ? buffer : buffer.subarray(0, filled);
}

/** The end of the last whole UTF-8 character in `buffer`, so a cut read never splits one. */
export function utf8Boundary(buffer: Buffer): number {
  let index = buffer.length - 1;
  let continuation = 0;
  while (index >= 0 && continuation < 3 && (buffer[index]! & 0xc0) === 0x80) {
    index--;
    continuation++;
  }
  if (index < 0) return buffer.length;
  const lead = buffer[index]!;
  const width = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return continuation + 1 >= width ? buffer.length : index;
}

function skipReason(stats: Stats, maxFileBytes: number): string | undefined {
  if (stats.isSymbolicLink()) return "symbolic link (not followed)";
  if (!stats.isFile()) return specialKind(stats);
  if (stats.nlink > 1) return "has more than one hard link";
  if (stats.size > maxFileBytes) return `larger than ${maxFileBytes} bytes`;
  return undefined;
}

function entryType(stats: Stats): EntryType {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  if (stats.isSymbolicLink()) return "symlink";
  return "other";
}

function specialKind(stats: Stats): string {
  if (stats.isFIFO()) return "FIFO";
  if (stats.isSocket()) return "socket";
  if (stats.isCharacterDevice()) return "character device";
  if (stats.isBlockDevice()) return "block device";
  if (stats.isSymbolicLink()) return "symbolic link";
  return "special file";
}

function joinDisplay(parent: string, name: string): string {
  return parent === "." ? name : `${parent}/${name}`;
}

function notFound(tool: string, given: string): ToolError {
  return new ToolError(`${tool}: '${given}' does not exist`, { code: ERROR_CODES.FS_NOT_FOUND });
}

function isDirectory(tool: string, given: string): ToolError {
  return new ToolError(`${tool}: '${given}' is a directory`, { code: ERROR_CODES.FS_IS_DIRECTORY });
}

function changed(tool: string, given: string): SandboxError {
  return new SandboxError(
    `${tool}: '${given}' changed while it was being opened (a symbolic link or another file was put in its ` +
      "place); nothing was read or written.",
    { code: ERROR_CODES.SANDBOX_PATH_CHANGED, hint: "Something else is changing the workspace concurrently" },
  );
}

/**
 * `lstat` of a listed name, or undefined when it went away meanwhile. Synchronous like the path checks: a few µs
 * against tens for a trip to the thread pool per entry (decision 0004).
 */
function lstatOrUndefined(target: string): Stats | undefined {
  try {
    return lstatSync(target);
  } catch {
    return undefined;
  }
}
