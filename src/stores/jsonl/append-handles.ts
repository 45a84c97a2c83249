import { type FileHandle, open } from "node:fs/promises";

/**
 * Append-mode handles kept open between appends, so an append to a file this process keeps writing is a write
 * and an `fstat` instead of `open`, write, `fstat` and `close`. At most `max` are kept; the least recently used
 * is closed past that. A handle is only ever handed back for the same file: the caller names the inode its own
 * last look at the path found, and a handle opened on another inode (the file was deleted or replaced behind
 * it) is closed rather than written through. Writes through a kept handle go to the file's end whoever else
 * appended meanwhile (`O_APPEND`), as writes through a fresh one do.
 *
 * The caller runs one append per path at a time; `take` removes the handle while it is in use, so neither
 * eviction nor `close` can shut it mid-write.
 */
export class AppendHandles {
  /** Map order is use order: the first entry is the least recently used. */
  private readonly kept = new Map<string, { handle: FileHandle; ino: number }>();

  constructor(private readonly max: number) {}

  /** A handle appending to `path`: the kept one if it is open on inode `ino`, else a newly opened one. */
  async take(path: string, ino: number): Promise<FileHandle> {
    const kept = this.kept.get(path);
    if (kept !== undefined) {
      this.kept.delete(path);
      if (ino !== 0 && kept.ino === ino) return kept.handle;
      await closeQuietly(kept.handle);
    }
    return open(path, "a");
  }

  /** Keep `handle`, open on inode `ino`, for the next append to `path`; past `max`, close the least recently used. */
  async keep(path: string, handle: FileHandle, ino: number): Promise<void> {
    this.kept.set(path, { handle, ino });
    if (this.kept.size <= this.max) return;
    const [oldest, entry] = this.kept.entries().next().value as [string, { handle: FileHandle }];
    this.kept.delete(oldest);
    await closeQuietly(entry.handle);
  }

  /** Close the handle kept for `path`, if any. */
  async close(path: string): Promise<void> {
    const kept = this.kept.get(path);
    if (kept === undefined) return;
    this.kept.delete(path);
    await closeQuietly(kept.handle);
  }

  /** Close every kept handle. */
  async closeAll(): Promise<void> {
    const handles = [...this.kept.values()];
    this.kept.clear();
    await Promise.all(handles.map(({ handle }) => closeQuietly(handle)));
  }

  /** Handles kept now (for tests). */
  get size(): number {
    return this.kept.size;
  }
}

/** Close a handle whose writes are done; a failing close loses nothing written, so it is not an error. */
async function closeQuietly(handle: FileHandle): Promise<void> {
  try {
    await handle.close();
  } catch {
    // Already closed, or the file system is gone: either way there is nothing left to do with it.
  }
}
