import { afterEach, describe, expect, it, vi } from "vitest";
import { isoNow } from "./iso-now.js";

describe("isoNow", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("is the clock's current millisecond as ISO-8601 UTC", () => {
    vi.spyOn(Date, "now").mockReturnValue(Date.UTC(2026, 10, 27, 1, 2, 3, 456));
    expect(isoNow()).toBe("2026-11-27T01:02:03.456Z");
  });

  it("follows the clock from one millisecond to the next, and back", () => {
    const now = vi.spyOn(Date, "now");
    const first = Date.UTC(2030, 0, 1, 0, 0, 0, 999);
    now.mockReturnValue(first);
    expect(isoNow()).toBe("2030-01-01T00:00:00.999Z");
    expect(isoNow()).toBe("2030-01-01T00:00:00.999Z");
    now.mockReturnValue(first + 1);
    expect(isoNow()).toBe("2030-01-01T00:00:01.000Z");
    // A clock set back (NTP) is followed too: nothing assumes time only moves on.
    now.mockReturnValue(first - 86_400_000);
    expect(isoNow()).toBe("2029-12-31T00:00:00.999Z");
  });

  it("gives what new Date().toISOString() gives for the same instant", () => {
    for (const ms of [0, 1, 1_700_000_000_123, 8_640_000_000_000]) {
      vi.spyOn(Date, "now").mockReturnValue(ms);
      expect(isoNow()).toBe(new Date(ms).toISOString());
    }
  });
});
