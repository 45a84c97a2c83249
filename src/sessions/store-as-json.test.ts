import { afterEach, describe, expect, it, vi } from "vitest";
import { KeelError } from "../errors/keel-error.js";
import { getLogger } from "../logging/logger.js";
import { storeAsJson } from "./store-as-json.js";

afterEach(() => {
  vi.restoreAllMocks();
});

/** A write that serialises as the persistent stores do. */
function jsonWrite(written: string[]) {
  return async (values: unknown) => {
    written.push(JSON.stringify(values));
  };
}

describe("storeAsJson", () => {
  it("writes JSON values once, as they are", async () => {
    const written: string[] = [];
    await storeAsJson({ runId: "r", what: "events", values: [{ a: 1 }], write: jsonWrite(written) });
    expect(written).toEqual(['[{"a":1}]']);
  });

  it("writes values JSON cannot hold described, with a warning naming the cause", async () => {
    const warn = vi.spyOn(getLogger(), "warn").mockImplementation(() => {});
    const written: string[] = [];
    const payload: Record<string, unknown> = { n: 10n };
    payload.self = payload;
    await storeAsJson({ runId: "r1", what: "events", values: [{ payload }], write: jsonWrite(written) });
    expect(written).toEqual(['[{"payload":{"n":10,"self":"[Circular $[0].payload]"}}]']);
    expect(warn).toHaveBeenCalledWith(
      "Run r1: its events held values JSON cannot hold; they are stored as descriptions of themselves",
      expect.objectContaining({ runId: "r1", cause: expect.any(TypeError) }),
    );
  });

  it("fails as before when the write fails for another reason", async () => {
    const down = new Error("store is down");
    const write = vi.fn(async () => {
      throw down;
    });
    await expect(storeAsJson({ runId: "r", what: "record", values: { a: 1 }, write })).rejects.toBe(down);
    expect(write).toHaveBeenCalledTimes(1);
  });

  it("fails without describing the values when the store is away, whatever the values hold", async () => {
    const warn = vi.spyOn(getLogger(), "warn").mockImplementation(() => {});
    for (const code of ["store.connection", "store.unavailable"]) {
      const away = new KeelError("the store did not answer", { code, retryable: true });
      const write = vi.fn(async () => {
        throw away;
      });
      const values = { n: 10n };
      await expect(storeAsJson({ runId: "r", what: "checkpoint", values, write })).rejects.toBe(away);
      expect(write).toHaveBeenCalledTimes(1);
    }
    expect(warn).not.toHaveBeenCalled();
  });
});
