import type { PoolClient } from "pg";
import { describe, expect, it } from "vitest";
import { KeelError } from "../../errors/keel-error.js";
import { StoreOutage } from "../../sessions/store-outage.js";
import type { AdvisorySessionLock } from "./advisory-session-lock.js";
import { SessionLease } from "./session-lease.js";

/** Locks handed out in turn, each on a connection named by its number; what was released, and the lost hooks. */
function takes() {
  const released: number[] = [];
  const lost: (() => void)[] = [];
  let taken = 0;
  const take = async (onLost: () => void): Promise<AdvisorySessionLock> => {
    const id = ++taken;
    lost.push(onLost);
    return {
      client: { id } as unknown as PoolClient,
      release: async () => {
        released.push(id);
      },
    };
  };
  return { take, released, lost, taken: () => taken };
}

const connectionLost = () =>
  new KeelError("Connection terminated", { code: "store.connection", retryable: true });
const isLost = (error: unknown) => KeelError.isInstance(error) && error.code === "store.connection";
const idOf = (client: PoolClient) => (client as unknown as { id: number }).id;

describe("SessionLease", () => {
  it("takes the lock again on a new connection when its connection dies, and gives back the dead one", async () => {
    const locks = takes();
    const lease = await SessionLease.hold(locks.take, undefined);
    expect(await lease.withClient("load", async (client) => idOf(client), isLost)).toBe(1);
    locks.lost[0]!();
    expect(await lease.withClient("save", async (client) => idOf(client), isLost)).toBe(2);
    await lease.release();
    expect(locks.released).toEqual([1, 2]);
  });

  it("retries a statement that found its connection lost on the connection that took the lock back", async () => {
    const locks = takes();
    const outage = new StoreOutage({ outageMs: 5000, initialDelayMs: 1 });
    const lease = await SessionLease.hold(locks.take, outage);
    const used: number[] = [];
    const result = await lease.withClient(
      "save",
      async (client) => {
        used.push(idOf(client));
        if (idOf(client) === 1) throw connectionLost();
        return "saved";
      },
      isLost,
    );
    expect(result).toBe("saved");
    expect(used).toEqual([1, 2]);
    await lease.release();
    expect(locks.released).toEqual([1, 2]);
  });

  it("without an outage wait, fails a statement whose connection was lost", async () => {
    const lease = await SessionLease.hold(takes().take, undefined);
    await expect(
      lease.withClient(
        "save",
        async () => {
          throw connectionLost();
        },
        isLost,
      ),
    ).rejects.toMatchObject({ code: "store.connection" });
  });
});
