import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../errors/error-classes.js";
import { KeelError } from "../errors/keel-error.js";
import { isStoreOutage, StoreOutage } from "./store-outage.js";

const lost = () =>
  new KeelError("no connection", { code: "store.connection", retryable: true, hint: "Start the server." });

/** An attempt that fails with `error` its first `failures` calls, then answers "ok". */
function failing(failures: number, error: () => unknown = lost) {
  let calls = 0;
  const attempt = async () => {
    calls++;
    if (calls <= failures) throw error();
    return "ok";
  };
  return { attempt, calls: () => calls };
}

describe("isStoreOutage", () => {
  it("is true for a retryable connection, busy, full disk or device error, and false otherwise", () => {
    for (const code of ["store.connection", "store.busy", "store.disk_full", "store.io"])
      expect(isStoreOutage(new KeelError("x", { code, retryable: true }))).toBe(true);
    expect(isStoreOutage(new KeelError("x", { code: "store.connection", retryable: false }))).toBe(false);
    expect(isStoreOutage(new KeelError("x", { code: "store.query", retryable: true }))).toBe(false);
    expect(isStoreOutage(new Error("store.connection"))).toBe(false);
  });
});

describe("StoreOutage", () => {
  it("retries an attempt the store failed until it answers", async () => {
    const outage = new StoreOutage({ outageMs: 5000, initialDelayMs: 1, maxDelayMs: 2 });
    const { attempt, calls } = failing(3);
    await expect(outage.run("saveRun", attempt)).resolves.toBe("ok");
    expect(calls()).toBe(4);
  });

  it("does not retry other errors", async () => {
    const outage = new StoreOutage({ outageMs: 5000, initialDelayMs: 1 });
    const { attempt, calls } = failing(1, () => new KeelError("bad", { code: "store.query" }));
    await expect(outage.run("saveRun", attempt)).rejects.toMatchObject({ code: "store.query" });
    expect(calls()).toBe(1);
  });

  it("gives up after outageMs with store.unavailable, naming the operation and keeping the store's error and hint", async () => {
    const outage = new StoreOutage({ outageMs: 30, initialDelayMs: 1, maxDelayMs: 5 });
    const { attempt } = failing(Number.POSITIVE_INFINITY);
    const error = (await outage.run("commitCheckpoint", attempt).catch((thrown) => thrown)) as KeelError;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.code).toBe("store.unavailable");
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/commitCheckpoint/);
    expect(error.hint).toMatch(/resume/);
    expect(error.hint).toMatch(/Start the server/);
    expect((error.cause as KeelError).code).toBe("store.connection");
    expect(outage.exhausted).toBe(true);
  });

  it("shares one clock between calls: once an outage has lasted outageMs, the next call tries once", async () => {
    const outage = new StoreOutage({ outageMs: 20, initialDelayMs: 1, maxDelayMs: 5 });
    await outage.run("first", failing(Number.POSITIVE_INFINITY).attempt).catch(() => {});
    const second = failing(Number.POSITIVE_INFINITY);
    await expect(outage.run("second", second.attempt)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(second.calls()).toBe(1);
    // A success ends the outage: the clock starts again at the next failure.
    await outage.run("third", failing(0).attempt);
    expect(outage.exhausted).toBe(false);
    const fourth = failing(2);
    await expect(outage.run("fourth", fourth.attempt)).resolves.toBe("ok");
  });

  it("stops retrying when retryIf says no", async () => {
    const outage = new StoreOutage({ outageMs: 5000, initialDelayMs: 1 });
    const { attempt, calls } = failing(5);
    await expect(outage.run("session", attempt, { retryIf: () => false })).rejects.toMatchObject({
      code: "store.connection",
    });
    expect(calls()).toBe(1);
  });

  it("stops waiting when its signal aborts, failing with the store's own error", async () => {
    const controller = new AbortController();
    const outage = new StoreOutage({ outageMs: 60_000, initialDelayMs: 1000, signal: controller.signal });
    const { attempt } = failing(Number.POSITIVE_INFINITY);
    const running = outage.run("saveRun", attempt);
    controller.abort();
    // Well before the 60 s the outage would be waited out (the test's own timeout would fail it).
    await expect(running).rejects.toMatchObject({ code: "store.connection" });
  });
});
