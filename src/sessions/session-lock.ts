import { SessionQueueFullError } from "../errors/error-classes.js";

/** Options of {@link SessionLock.acquire}. */
export interface SessionLockAcquireOptions {
  /**
   * The token the caller holds the session under. While the session is held under this token a call passing it
   * enters at once (agent-as-tool sharing its parent's session); otherwise the caller waits its turn and then
   * holds the session under it. Without a token the hold cannot be re-entered.
   */
  reentrantToken?: symbol;
  /** Acquirers allowed to wait for this session; one more is refused with `SessionQueueFullError`. Default 1000. */
  queueSize?: number;
  /** Aborting it while waiting leaves the queue and rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Gives the session back; calling it more than once is harmless. */
export type SessionLockRelease = () => void;

/** The default `queueSize`, matching `runtime.session_queue_size`. */
export const DEFAULT_SESSION_QUEUE_SIZE = 1000;

interface Waiter {
  readonly token: symbol | undefined;
  readonly signal: AbortSignal | undefined;
  resolve(release: SessionLockRelease): void;
  reject(reason: unknown): void;
  onAbort: (() => void) | undefined;
}

interface LockEntry {
  token: symbol | undefined;
  /** Holds under `token`: 1 plus one per re-entry still open. */
  holds: number;
  readonly waiters: Waiter[];
}

/**
 * A per-session FIFO mutex for one process. Re-entrancy is by explicit token rather than AsyncLocalStorage,
 * which would tax every promise in the process. Entries exist only while a session is held, so idle sessions
 * cost no memory.
 */
export class SessionLock {
  private readonly entries = new Map<string, LockEntry>();

  /** Wait for the session (FIFO) and resolve with the function that releases it. */
  acquire(sessionId: string, options: SessionLockAcquireOptions = {}): Promise<SessionLockRelease> {
    const { reentrantToken, signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const entry = this.entries.get(sessionId);
    if (entry === undefined) {
      this.entries.set(sessionId, { token: reentrantToken, holds: 1, waiters: [] });
      return Promise.resolve(this.releaser(sessionId));
    }
    if (reentrantToken !== undefined && entry.token === reentrantToken) {
      entry.holds++;
      return Promise.resolve(this.releaser(sessionId));
    }
    const queueSize = options.queueSize ?? DEFAULT_SESSION_QUEUE_SIZE;
    if (entry.waiters.length >= queueSize) {
      return Promise.reject(
        new SessionQueueFullError(
          `session "${sessionId}" already has ${entry.waiters.length} run(s) waiting`,
          {
            hint: `Runs of one session execute one at a time; raise runtime.session_queue_size (now ${queueSize}) or send fewer concurrent runs to this session.`,
            context: { sessionId },
          },
        ),
      );
    }
    return new Promise<SessionLockRelease>((resolve, reject) => {
      const waiter: Waiter = { token: reentrantToken, signal, resolve, reject, onAbort: undefined };
      if (signal !== undefined) {
        waiter.onAbort = () => this.abandon(sessionId, waiter);
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      entry.waiters.push(waiter);
    });
  }

  /** True while some caller holds the session. */
  isHeld(sessionId: string): boolean {
    return this.entries.has(sessionId);
  }

  /** Callers waiting for the session. */
  waitingCount(sessionId: string): number {
    return this.entries.get(sessionId)?.waiters.length ?? 0;
  }

  /** Sessions currently held. */
  heldCount(): number {
    return this.entries.size;
  }

  private releaser(sessionId: string): SessionLockRelease {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(sessionId);
    };
  }

  private release(sessionId: string): void {
    const entry = this.entries.get(sessionId);
    if (entry === undefined) return;
    if (--entry.holds > 0) return;
    const next = entry.waiters.shift();
    if (next === undefined) {
      this.entries.delete(sessionId);
      return;
    }
    if (next.onAbort !== undefined) next.signal?.removeEventListener("abort", next.onAbort);
    entry.token = next.token;
    entry.holds = 1;
    next.resolve(this.releaser(sessionId));
  }

  private abandon(sessionId: string, waiter: Waiter): void {
    const entry = this.entries.get(sessionId);
    const index = entry === undefined ? -1 : entry.waiters.indexOf(waiter);
    if (index === -1) return;
    entry?.waiters.splice(index, 1);
    waiter.reject(waiter.signal?.reason);
  }
}
