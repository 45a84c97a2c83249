import type { Pool, PoolClient } from "pg";
import { toStoreError } from "./to-store-error.js";

/** A server-side session lock and the connection that holds it. */
export interface AdvisorySessionLock {
  /** The connection holding the lock; writes that must not outlive the lock go through it. */
  readonly client: PoolClient;
  /** Unlock and give the connection back; a connection that cannot unlock is closed, which also unlocks. */
  release(): Promise<void>;
}

/**
 * Take `pg_advisory_lock(hashtext(key))` on a dedicated connection from `pool`, waiting at most
 * `lockTimeoutMs` (Postgres' `lock_timeout` applies to advisory locks too) — then `store.lock_timeout`. A
 * session-level lock rather than a row lock, because a scope lasts a whole run, far longer than a transaction
 * should stay open. A hash collision only makes two sessions take turns; it never lets two holders in. Aborting
 * `signal` while waiting rejects with its reason.
 */
export async function acquireAdvisorySessionLock(
  pool: Pool,
  key: string,
  options: {
    lockTimeoutMs: number;
    where: string;
    signal?: AbortSignal | undefined;
    /** Called once if the connection holding the lock dies while it is held: the lock died with it. */
    onLost?: () => void;
  },
): Promise<AdvisorySessionLock> {
  const { signal } = options;
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw toStoreError(error, options.where, "session lock");
  }
  // A checked-out client whose server goes away emits `error`; unheard, it would crash the process. The failure
  // still surfaces, typed, from the next query on it.
  let held = false;
  const onError = () => {
    if (!held) return;
    held = false;
    options.onLost?.();
  };
  client.on("error", onError);
  client.on("end", onError);
  const unwatch = () => {
    client.off("error", onError);
    client.off("end", onError);
  };
  try {
    await client.query(`set lock_timeout = ${Math.max(0, Math.floor(options.lockTimeoutMs))}`);
    if (signal === undefined) await client.query("select pg_advisory_lock(hashtext($1))", [key]);
    else await pollAdvisoryLock(client, key, { signal, lockTimeoutMs: options.lockTimeoutMs });
  } catch (error) {
    unwatch();
    const aborted = signal?.aborted === true && error === signal.reason;
    // A timed-out or abandoned wait leaves a healthy connection; anything else may not have, so do not pool it.
    client.release(aborted || (error as { code?: string }).code === "55P03" ? undefined : true);
    // The signal's reason is the caller's own value and must come back unchanged.
    if (aborted) throw error;
    throw toStoreError(error, options.where, "session lock");
  }
  held = true;
  let released = false;
  return {
    client,
    async release() {
      if (released) return;
      released = true;
      const lost = !held;
      held = false;
      let broken: true | undefined = lost ? true : undefined;
      // A lost connection holds no lock to give back; it is only discarded.
      if (!lost) {
        try {
          await client.query("select pg_advisory_unlock(hashtext($1))", [key]);
        } catch {
          broken = true;
        }
      }
      unwatch();
      client.release(broken);
    },
  };
}

/**
 * A wait its caller can call off: `pg_advisory_lock` blocks its connection until it is granted, so this tries
 * `pg_try_advisory_lock` with growing, jittered pauses instead, within `lockTimeoutMs` (0: no limit).
 */
async function pollAdvisoryLock(
  client: PoolClient,
  key: string,
  wait: { signal: AbortSignal; lockTimeoutMs: number },
): Promise<void> {
  const { signal, lockTimeoutMs } = wait;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) throw signal.reason;
    const { rows } = await client.query<{ locked: boolean }>(
      "select pg_try_advisory_lock(hashtext($1)) as locked",
      [key],
    );
    if (rows[0]?.locked === true) return;
    if (lockTimeoutMs > 0 && Date.now() - started >= lockTimeoutMs) {
      throw Object.assign(new Error(`no session lock within lock_timeout (${lockTimeoutMs} ms)`), {
        code: "55P03",
      });
    }
    await sleep(Math.min(50, 2 ** Math.min(attempt, 6)) * (0.5 + Math.random()), signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
