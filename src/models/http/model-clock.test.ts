import { describe, expect, it } from "vitest";
import { systemClock } from "./model-clock.js";

describe("systemClock", () => {
  it("tells the time, sleeps and draws numbers in [0, 1)", async () => {
    expect(Math.abs(systemClock.now() - Date.now())).toBeLessThan(1000);
    await expect(systemClock.sleep(1)).resolves.toBeUndefined();
    const controller = new AbortController();
    await expect(systemClock.sleep(1, controller.signal)).resolves.toBeUndefined();
    const value = systemClock.random();
    expect(value).toBeGreaterThanOrEqual(0);
    expect(value).toBeLessThan(1);
  });

  it("rejects a sleep with the signal's reason, at once or when it aborts", async () => {
    const reason = new Error("cancelled");
    await expect(systemClock.sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
    const controller = new AbortController();
    const sleeping = systemClock.sleep(60_000, controller.signal);
    controller.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
  });
});
