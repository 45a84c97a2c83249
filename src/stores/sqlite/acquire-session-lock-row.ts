import { randomBytes } from "node:crypto";
import { isProcessAlive } from "../jsonl/acquire-file-lock.js";
import type { SqliteDatabase } from "./open-sqlite-database.js";

/** Options of {@link acquireSessionLockRow}. */
export interface AcquireSessionLockRowOptions {
  /** Identifies this holder; see {@link makeLockOwner}. */
  readonly owner: string;
  readonly signal?: AbortSignal | undefined;
  /** Longest pause between attempts while another live process holds the row. Default 50 ms. */
  readonly maxPollMs?: number;
}

/** A lock-row owner for this process: its pid (to detect a dead holder) and a random tag (per manager). */
export function makeLockOwner(): string {
  return `${process.pid}:${randomBytes(6).toString("hex")}`;
}

/**
 * Hold `sessionId` across processes through a row in `session_locks`, and resolve with the function that lets
 * go. SQLite has no blocking named lock, so this polls: each attempt is one short `BEGIN IMMEDIATE` transaction
 * that inserts the row when no live owner holds it (a row whose pid is dead is stale and taken over), so the
 * database's write lock is never held while waiting and other sessions' writes go on. Aborting `signal` while
 * waiting rejects with its reason.
 */
export async function acquireSessionLockRow(
  db: SqliteDatabase,
  sessionId: string,
  options: AcquireSessionLockRowOptions,
): Promise<() => void> {
  const { owner, signal } = options;
  const maxPollMs = options.maxPollMs ?? 50;
  const pid = process.pid;
  const select = db.prepare("SELECT owner, pid FROM session_locks WHERE session_id = ?");
  const upsert = db.prepare(
    `INSERT INTO session_locks (session_id, owner, pid, acquired_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (session_id) DO UPDATE
     SET owner = excluded.owner, pid = excluded.pid, acquired_at = excluded.acquired_at`,
  );
  const tryTake = (): boolean =>
    db.transaction(() => {
      const row = select.get(sessionId);
      if (row !== undefined) {
        const holder = Number(row.pid);
        // Our own pid is alive by definition: a row under it belongs to another manager of this process.
        const stale = holder !== pid && !isProcessAlive(holder);
        if (!stale && row.owner !== owner) return false;
      }
      upsert.run(sessionId, owner, pid, new Date().toISOString());
      return true;
    });
  for (let attempt = 0; ; attempt++) {
    if (signal?.aborted) throw signal.reason;
    if (tryTake()) break;
    // Back off quickly to the cap, with jitter so two waiters do not poll in lockstep.
    const pause = Math.min(maxPollMs, 2 ** Math.min(attempt, 6)) * (0.5 + Math.random());
    await sleep(pause, signal);
  }
  let released = false;
  const release = db.prepare("DELETE FROM session_locks WHERE session_id = ? AND owner = ?");
  return () => {
    if (released) return;
    released = true;
    release.run(sessionId, owner);
  };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
