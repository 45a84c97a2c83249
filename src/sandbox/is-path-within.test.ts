import { describe, expect, it } from "vitest";
import { isPathWithin, relativeSegments } from "./is-path-within.js";

describe("isPathWithin", () => {
  it.each([
    ["/ws", "/ws", true],
    ["/ws", "/ws/a/b", true],
    ["/ws", "/ws-evil", false],
    ["/ws", "/ws-evil/a", false],
    ["/ws", "/wsx", false],
    ["/ws", "/", false],
    ["/ws/a", "/ws", false],
    ["/ws", "/WS/a", false],
    ["/", "/anything", true],
    ["/ws/", "/ws/a", true],
  ])("root %s, path %s: %s", (root, candidate, inside) => {
    expect(isPathWithin(root, candidate)).toBe(inside);
  });

  it("gives the segments below the root", () => {
    expect(relativeSegments("/ws", "/ws/a/b")).toEqual(["a", "b"]);
    expect(relativeSegments("/ws", "/ws")).toEqual([]);
  });
});
