import { randomUUID } from "node:crypto";
import { mkdir, open, readFile, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";

/** Options of {@link acquireFileLock}. */
export interface FileLockOptions {
  /** Aborting it while waiting stops waiting and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Longest pause between attempts. Default 50 ms. */
  maxDelayMs?: number;
}

/** Gives the lock back; calling it more than once is harmless. */
export type FileLockRelease = () => Promise<void>;

// A lock file read between its creation and its first write is empty; only after this long is one stale.
const UNREADABLE_STALE_MS = 2000;

/**
 * Take an exclusive lock shared by every process on this machine: a file created with `wx` holding
 * `<pid>\n<nonce>`. While another holder's file exists we retry with growing, jittered pauses; a file whose pid
 * no longer runs (its holder crashed) is stale and taken over. The nonce lets `release` remove only its own file.
 */
export async function acquireFileLock(path: string, options: FileLockOptions = {}): Promise<FileLockRelease> {
  const content = `${process.pid}\n${randomUUID()}\n`;
  const maxDelay = options.maxDelayMs ?? 50;
  let delay = 1;
  for (;;) {
    options.signal?.throwIfAborted();
    if (await createExclusive(path, content)) return releaser(path, content);
    const seen = await readLock(path);
    if (seen === undefined) continue; // released between our attempt and the read: try again at once
    if (await isStale(path, seen)) {
      await takeOver(path, seen);
      continue;
    }
    await sleep(delay * (0.5 + Math.random()), options.signal);
    delay = Math.min(delay * 2, maxDelay);
  }
}

/** True when no process runs under `pid` (`EPERM` means it runs as another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

async function createExclusive(path: string, content: string): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(path, "wx");
      try {
        await handle.writeFile(content);
      } catch (error) {
        // A lock file left empty (a full disk) would hold everyone off until it counts as stale.
        await handle.close().catch(() => {});
        await rm(path, { force: true }).catch(() => {});
        throw error;
      }
      await handle.close();
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EEXIST") return false;
      if (code !== "ENOENT" || attempt > 0) throw error;
      await mkdir(dirname(path), { recursive: true });
    }
  }
}

async function readLock(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

async function isStale(path: string, content: string): Promise<boolean> {
  const pid = Number.parseInt(content, 10);
  if (Number.isInteger(pid) && pid > 0) return !isProcessAlive(pid);
  // No pid yet: the holder may be between `open` and `write`, or died there.
  try {
    return Date.now() - (await stat(path)).mtimeMs > UNREADABLE_STALE_MS;
  } catch {
    return false;
  }
}

/**
 * Remove a stale lock without racing another process doing the same: without this guard, two takers could
 * both see the stale file and the slower one would delete the lock the faster one just created.
 */
async function takeOver(path: string, stale: string): Promise<void> {
  const guard = `${path}.takeover`;
  const guardContent = `${process.pid}\n${randomUUID()}\n`;
  if (!(await createExclusive(guard, guardContent))) {
    const holder = await readLock(guard);
    // A taker that died mid-takeover leaves its guard behind; its pid tells.
    if (holder !== undefined && (await isStale(guard, holder))) await rm(guard, { force: true });
    return;
  }
  try {
    if ((await readLock(path)) === stale) await rm(path, { force: true });
  } finally {
    await rm(guard, { force: true });
  }
}

function releaser(path: string, content: string): FileLockRelease {
  let released: Promise<void> | undefined;
  return () => {
    released ??= (async () => {
      // Only our own file: after a (mistaken) takeover the file may be someone else's now.
      if ((await readLock(path)) === content) await rm(path, { force: true });
    })();
    return released;
  };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
