import { acquireFileLock, type FileLockRelease } from "./acquire-file-lock.js";

/** This process's hold on one lock file, shared by everything in the process that uses it. */
export interface SharedFileLock {
  /** Users in this process now holding or waiting for it. */
  holds: number;
  ready: Promise<void>;
  /** Set once the file is ours. */
  release: FileLockRelease | undefined;
  /** Free for the owner's bookkeeping: e.g. "the cache was checked against the file since taking the lock". */
  validated: boolean;
  /** Calls off the acquisition once no one in this process waits for it any more. */
  stop?: AbortController;
}

/**
 * Reference-counted cross-process locks: the first user in this process creates the lock file, later users
 * share it, and the last one out removes it. Exclusivity inside the process is someone else's job (the
 * `SessionLock`); this only keeps other processes out, and never deadlocks a process against itself.
 */
export class SharedFileLocks {
  private readonly locks = new Map<string, SharedFileLock>();

  /** The lock for `key` while this process holds it, or undefined. */
  held(key: string): SharedFileLock | undefined {
    const lock = this.locks.get(key);
    return lock?.release === undefined ? undefined : lock;
  }

  /** Take or share the lock file at `path`; resolves with the function giving this use back. */
  async hold(key: string, path: string, signal?: AbortSignal): Promise<() => Promise<void>> {
    let lock = this.locks.get(key);
    if (lock === undefined) {
      const created: SharedFileLock = {
        holds: 0,
        ready: Promise.resolve(),
        release: undefined,
        validated: false,
      };
      // Not the caller's signal: the acquisition is shared, so one user giving up must not fail the others.
      const stop = new AbortController();
      created.stop = stop;
      created.ready = acquireFileLock(path, { signal: stop.signal }).then(
        (release) => {
          created.release = release;
        },
        (error: unknown) => {
          if (this.locks.get(key) === created) this.locks.delete(key);
          throw error;
        },
      );
      lock = created;
      this.locks.set(key, lock);
    }
    const shared = lock;
    shared.holds++;
    let given = false;
    const giveBack = async () => {
      if (given) return;
      given = true;
      await this.giveBack(key, shared);
    };
    try {
      await abortable(shared.ready, signal);
    } catch (error) {
      // Not awaited: an abandoned acquisition may still be waiting for another process's lock.
      void giveBack();
      throw error;
    }
    return giveBack;
  }

  private async giveBack(key: string, lock: SharedFileLock): Promise<void> {
    if (--lock.holds > 0) return;
    if (lock.release === undefined) {
      // Everyone here gave up waiting: stop polling for another process's lock (which would also keep this
      // process alive); a later user starts a fresh acquisition.
      if (this.locks.get(key) === lock) this.locks.delete(key);
      lock.stop?.abort();
    }
    try {
      await lock.ready;
    } catch {
      return;
    }
    if (lock.holds > 0) return; // someone in this process took it up while we waited
    if (this.locks.get(key) === lock) this.locks.delete(key);
    await lock.release?.();
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
