import type { PoolClient } from "pg";
import type { StoreOutageWait } from "../../sessions/store-outage.js";
import type { AdvisorySessionLock } from "./advisory-session-lock.js";

/**
 * Takes the session's advisory lock; `onLost` is called if its connection dies while it is held. `again` is
 * true when a lost lock is taken back.
 */
export type TakeSessionLock = (onLost: () => void, again: boolean) => Promise<AdvisorySessionLock>;

/**
 * A session's advisory lock for the length of a scope, kept through a lost connection. The lock lives on the
 * connection that took it, so a server restart or a dropped socket ends both; the lease then gives the dead
 * connection back to be discarded and takes the lock again on a new one at once — waiting out the outage
 * through `outage` — so the scope's own writes find a live lock-holding connection when they need one, and the
 * session is not left unheld for longer than the store is away.
 */
export class SessionLease {
  private current: Promise<AdvisorySessionLock>;
  private lock: AdvisorySessionLock | undefined;

  private constructor(
    private readonly take: TakeSessionLock,
    private readonly outage: StoreOutageWait | undefined,
  ) {
    this.current = take(() => this.retake(), false);
  }

  /** Take the lock; rejects as taking it does. */
  static async hold(take: TakeSessionLock, outage: StoreOutageWait | undefined): Promise<SessionLease> {
    const lease = new SessionLease(take, outage);
    lease.lock = await lease.current;
    return lease;
  }

  /**
   * Run `query` on the connection holding the lock, through the outage wait: a connection that fails under it is
   * taken as lost (the lock with it), and the retry runs on the connection that takes the lock again.
   */
  async withClient<R>(
    operation: string,
    query: (client: PoolClient) => Promise<R>,
    isLost: (error: unknown) => boolean,
  ): Promise<R> {
    const attempt = async () => {
      const lock = await this.current;
      try {
        return await query(lock.client);
      } catch (error) {
        if (isLost(error) && lock === this.lock) this.retake();
        throw error;
      }
    };
    return this.outage === undefined ? attempt() : this.outage.run(operation, attempt);
  }

  /** Unlock and give the connection back (after any retake under way). */
  async release(): Promise<void> {
    const lock = await this.current.catch(() => undefined);
    await lock?.release();
  }

  private retake(): void {
    const lost = this.current;
    this.lock = undefined;
    const taking = (async () => {
      // The dead connection goes back to the pool to be discarded; a take that failed left nothing to give back.
      await lost.then(
        (lock) => lock.release(),
        () => {},
      );
      const take = () => this.take(() => this.retake(), true);
      return this.outage === undefined ? take() : this.outage.run("session lock", take);
    })();
    this.current = taking;
    taking.then(
      (lock) => {
        if (this.current === taking) this.lock = lock;
      },
      // The failure reaches whoever uses the lease next.
      () => {},
    );
  }
}
