import { describe, expect, it } from "vitest";
import { KeelError } from "../errors/keel-error.js";
import { InMemorySessionManager } from "./in-memory-session-manager.js";
import { StoreOutage } from "./store-outage.js";
import { waitOutStoreOutages } from "./wait-out-store-outages.js";

const lost = () => new KeelError("connection lost", { code: "store.connection", retryable: true });

/** A store whose next `n` calls of `method` fail with a lost connection — after doing their work when `landed`. */
function flaky(method: "appendMessages" | "saveRun" | "session", n: number, landed = false) {
  const store = new InMemorySessionManager();
  const real = (store[method] as (...args: unknown[]) => Promise<unknown>).bind(store);
  let left = n;
  (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    if (left > 0) {
      left--;
      if (landed) await real(...args);
      throw lost();
    }
    return real(...args);
  };
  return store;
}

const outage = () => new StoreOutage({ outageMs: 5000, initialDelayMs: 1, maxDelayMs: 2 });

describe("waitOutStoreOutages", () => {
  it("retries a call the store failed", async () => {
    const store = waitOutStoreOutages(flaky("saveRun", 2), outage());
    const now = new Date().toISOString();
    const record = {
      ...{ runId: "r", agentId: "a", sessionId: "s", status: "created" as const, pendingToolCalls: [] },
      ...{ createdAt: now, updatedAt: now, lastSequence: 0 },
    };
    await store.saveRun(record);
    expect((await store.getRun("r"))?.runId).toBe("r");
  });

  it("does not append messages twice when the failed attempt landed after all", async () => {
    const base = flaky("appendMessages", 1, true);
    const store = waitOutStoreOutages(base, outage());
    await store.appendMessages("s", [{ role: "user", content: "hi" }]);
    expect(await base.loadMessages("s")).toEqual([{ role: "user", content: "hi" }]);
  });

  it("appends messages again when the failed attempt did not land", async () => {
    const base = flaky("appendMessages", 1, false);
    const store = waitOutStoreOutages(base, outage());
    await store.appendMessage("s", { role: "user", content: "hi" });
    expect(await base.loadMessages("s")).toEqual([{ role: "user", content: "hi" }]);
  });

  it("retries session() while the session is being taken, never once its scope ran", async () => {
    const store = waitOutStoreOutages(flaky("session", 2), outage());
    let ran = 0;
    await store.session("s", async () => ran++);
    expect(ran).toBe(1);
    const base = new InMemorySessionManager();
    const wrapped = waitOutStoreOutages(base, outage());
    let entered = 0;
    await expect(
      wrapped.session("s", async () => {
        entered++;
        throw lost();
      }),
    ).rejects.toMatchObject({ code: "store.connection" });
    expect(entered).toBe(1);
  });
});
