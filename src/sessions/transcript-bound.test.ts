import { describe, expect, it } from "vitest";
import { transcriptBound } from "./transcript-bound.js";

describe("transcriptBound", () => {
  it("is null for the whole transcript", () => {
    expect(transcriptBound(undefined)).toBeNull();
    expect(transcriptBound(Number.POSITIVE_INFINITY)).toBeNull();
    expect(transcriptBound(2 ** 31)).toBeNull();
  });

  it("bounds indexes like slice(0, length) for a length of zero or more", () => {
    expect(transcriptBound(0)).toBe(0);
    expect(transcriptBound(3)).toBe(3);
    expect(transcriptBound(2.9)).toBe(2);
    expect(transcriptBound(Number.NaN)).toBe(0);
  });

  it("loads nothing for a negative length", () => {
    expect(transcriptBound(-1)).toBe(0);
    expect(transcriptBound(Number.NEGATIVE_INFINITY)).toBe(0);
  });
});
