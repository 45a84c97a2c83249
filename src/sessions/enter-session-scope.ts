import type { SessionLock } from "./session-lock.js";
import type { SessionScope, SessionScopeOptions } from "./session-manager.js";

/** A scope a store holds now; a nested call with the holder's token finds its state here. */
export interface HeldScope {
  readonly token: symbol;
  readonly state: Record<string, unknown>;
}

export interface EnterSessionScopeInput<T> {
  lock: SessionLock;
  held: ReadonlyMap<string, HeldScope>;
  sessionId: string;
  fn: (scope: SessionScope) => Promise<T>;
  options: SessionScopeOptions;
  defaultQueueSize: number;
  /** Take the session across processes, load its state, run `fn`, write the state back, let go. */
  hold: (token: symbol) => Promise<T>;
}

/**
 * The in-process half of `session()` that every persistent store shares: queue FIFO behind this process's
 * other callers (bounded), and let a nested call with the holder's token re-enter without locking again — the
 * outer scope holds the cross-process lock and writes the shared state back.
 */
export async function enterSessionScope<T>(input: EnterSessionScopeInput<T>): Promise<T> {
  const { sessionId, options } = input;
  const token = options.reentrantToken ?? Symbol(sessionId);
  const release = await input.lock.acquire(sessionId, {
    reentrantToken: token,
    queueSize: options.queueSize ?? input.defaultQueueSize,
    signal: options.signal,
  });
  try {
    const held = input.held.get(sessionId);
    if (held !== undefined && held.token === token)
      return await input.fn({ sessionId, state: held.state, token });
    return await input.hold(token);
  } finally {
    release();
  }
}
