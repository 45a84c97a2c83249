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
 * should stay open. A hash collision only makes two sessions take turns; it never lets two holders in.
 */
export async function acquireAdvisorySessionLock(
  pool: Pool,
  key: string,
  options: { lockTimeoutMs: number; where: string },
): Promise<AdvisorySessionLock> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw toStoreError(error, options.where, "session lock");
  }
  // A checked-out client whose server goes away emits `error`; unheard, it would crash the process. The failure
  // still surfaces, typed, from the next query on it.
  const onError = () => {};
  client.on("error", onError);
  try {
    await client.query(`set lock_timeout = ${Math.max(0, Math.floor(options.lockTimeoutMs))}`);
    await client.query("select pg_advisory_lock(hashtext($1))", [key]);
  } catch (error) {
    client.off("error", onError);
    // A timed-out wait leaves a healthy connection; anything else may not have, so do not pool it.
    client.release((error as { code?: string }).code === "55P03" ? undefined : true);
    throw toStoreError(error, options.where, "session lock");
  }
  let released = false;
  return {
    client,
    async release() {
      if (released) return;
      released = true;
      let broken: true | undefined;
      try {
        await client.query("select pg_advisory_unlock(hashtext($1))", [key]);
      } catch {
        broken = true;
      }
      client.off("error", onError);
      client.release(broken);
    },
  };
}
