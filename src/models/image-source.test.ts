import { describe, expect, it } from "vitest";
import { imageSource } from "./image-source.js";

describe("imageSource", () => {
  it("keeps http(s) URLs", () => {
    expect(imageSource({ type: "image", data: " https://example.com/a.png " })).toEqual({
      kind: "url",
      url: "https://example.com/a.png",
    });
  });

  it("reads data: URLs", () => {
    expect(imageSource({ type: "image", data: "data:image/webp;base64,UklGRabc" })).toEqual({
      kind: "base64",
      mediaType: "image/webp",
      data: "UklGRabc",
    });
    expect(imageSource({ type: "image", data: "data:;base64,R0lGODlh" })).toEqual({
      kind: "base64",
      mediaType: "image/gif",
      data: "R0lGODlh",
    });
  });

  it("takes the part's media type, else guesses it from the first bytes, else PNG", () => {
    expect(imageSource({ type: "image", data: "AAAA", mediaType: "image/heic" }).kind).toBe("base64");
    const guess = (data: string) => (imageSource({ type: "image", data }) as { mediaType: string }).mediaType;
    expect(guess("iVBORw0")).toBe("image/png");
    expect(guess("/9j/4AAQ")).toBe("image/jpeg");
    expect(guess("R0lGODlh")).toBe("image/gif");
    expect(guess("UklGRiQ")).toBe("image/webp");
    expect(guess("AAAA")).toBe("image/png");
  });
});
