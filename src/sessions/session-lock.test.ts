import { describe, expect, it } from "vitest";
import { SessionQueueFullError } from "../errors/error-classes.js";
import { SessionLock } from "./session-lock.js";

const tick = () => new Promise((done) => setImmediate(done));

describe("SessionLock", () => {
  it("grants a free session at once and forgets it when released", async () => {
    const lock = new SessionLock();
    const release = await lock.acquire("s");
    expect(lock.isHeld("s")).toBe(true);
    release();
    release();
    expect(lock.isHeld("s")).toBe(false);
    expect(lock.heldCount()).toBe(0);
  });

  it("hands the session to waiters in FIFO order", async () => {
    const lock = new SessionLock();
    const order: number[] = [];
    const first = await lock.acquire("s");
    const waiters = [1, 2, 3].map((index) =>
      lock.acquire("s").then((release) => {
        order.push(index);
        release();
      }),
    );
    await tick();
    expect(lock.waitingCount("s")).toBe(3);
    expect(order).toEqual([]);
    first();
    await Promise.all(waiters);
    expect(order).toEqual([1, 2, 3]);
    expect(lock.isHeld("s")).toBe(false);
  });

  it("keeps different sessions independent", async () => {
    const lock = new SessionLock();
    const a = await lock.acquire("a");
    const b = await lock.acquire("b");
    expect(lock.heldCount()).toBe(2);
    a();
    b();
    expect(lock.heldCount()).toBe(0);
  });

  it("re-enters with the holder's token and releases only after every hold ends", async () => {
    const lock = new SessionLock();
    const token = Symbol("holder");
    const outer = await lock.acquire("s", { reentrantToken: token });
    const inner = await lock.acquire("s", { reentrantToken: token });
    let waiterRan = false;
    const waiter = lock.acquire("s").then((release) => {
      waiterRan = true;
      release();
    });
    outer();
    await tick();
    expect(waiterRan).toBe(false);
    inner();
    await waiter;
    expect(waiterRan).toBe(true);
  });

  it("makes a token wait when another token holds, then holds under it", async () => {
    const lock = new SessionLock();
    const first = await lock.acquire("s", { reentrantToken: Symbol("a") });
    const b = Symbol("b");
    const second = lock.acquire("s", { reentrantToken: b });
    await tick();
    expect(lock.waitingCount("s")).toBe(1);
    first();
    const releaseB = await second;
    const nested = await lock.acquire("s", { reentrantToken: b });
    nested();
    releaseB();
    expect(lock.isHeld("s")).toBe(false);
  });

  it("refuses one waiter beyond the queue size with a hint", async () => {
    const lock = new SessionLock();
    const held = await lock.acquire("s");
    const waiting = lock.acquire("s", { queueSize: 2 });
    const waiting2 = lock.acquire("s", { queueSize: 2 });
    const error = await lock.acquire("s", { queueSize: 2 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SessionQueueFullError);
    expect((error as SessionQueueFullError).hint).toContain("runtime.session_queue_size");
    expect((error as SessionQueueFullError).retryable).toBe(true);
    held();
    (await waiting)();
    (await waiting2)();
  });

  it("refuses any waiter with queue size 0 but still grants a free session", async () => {
    const lock = new SessionLock();
    const held = await lock.acquire("s", { queueSize: 0 });
    await expect(lock.acquire("s", { queueSize: 0 })).rejects.toBeInstanceOf(SessionQueueFullError);
    held();
  });

  it("removes an aborted waiter and rejects with the signal's reason", async () => {
    const lock = new SessionLock();
    const held = await lock.acquire("s");
    const controller = new AbortController();
    const aborted = lock.acquire("s", { signal: controller.signal });
    const next = lock.acquire("s");
    controller.abort(new Error("stop"));
    await expect(aborted).rejects.toThrow("stop");
    expect(lock.waitingCount("s")).toBe(1);
    held();
    (await next)();
    expect(lock.isHeld("s")).toBe(false);
  });

  it("rejects at once for an already-aborted signal", async () => {
    const lock = new SessionLock();
    const reason = new Error("already");
    await expect(lock.acquire("s", { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(lock.isHeld("s")).toBe(false);
  });

  it("ignores an abort after the waiter was granted", async () => {
    const lock = new SessionLock();
    const held = await lock.acquire("s");
    const controller = new AbortController();
    const granted = lock.acquire("s", { signal: controller.signal });
    held();
    const release = await granted;
    controller.abort();
    expect(lock.isHeld("s")).toBe(true);
    release();
    expect(lock.isHeld("s")).toBe(false);
  });
});
