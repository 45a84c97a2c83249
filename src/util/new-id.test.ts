import { describe, expect, it } from "vitest";
import { newId } from "./new-id.js";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("newId", () => {
  it("makes distinct version-4 uuids, across refills of its random pool", () => {
    const ids = new Set<string>();
    for (let index = 0; index < 1000; index++) {
      const id = newId();
      expect(id).toMatch(UUID_V4);
      ids.add(id);
    }
    expect(ids.size).toBe(1000);
  });

  it("puts a prefix before the uuid", () => {
    const id = newId("session-");
    expect(id.startsWith("session-")).toBe(true);
    expect(id.slice("session-".length)).toMatch(UUID_V4);
  });

  it("uses every hex digit (the random bits are not lost)", () => {
    const seen = new Set<string>();
    for (let index = 0; index < 200; index++) for (const char of newId().replaceAll("-", "")) seen.add(char);
    expect([...seen].sort().join("")).toBe("0123456789abcdef");
  });
});
