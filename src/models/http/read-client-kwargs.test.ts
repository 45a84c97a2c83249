import { describe, expect, it } from "vitest";
import { readClientKwargs } from "./read-client-kwargs.js";

describe("readClientKwargs", () => {
  it("takes extra headers and body in snake_case or camelCase and ignores the rest", () => {
    expect(readClientKwargs(undefined)).toEqual({});
    expect(readClientKwargs({ user: "u1" })).toEqual({});
    expect(
      readClientKwargs({ extra_headers: { "x-a": "1", "x-b": 2 }, extra_body: { metadata: {} } }),
    ).toEqual({
      headers: { "x-a": "1" },
      body: { metadata: {} },
    });
    expect(readClientKwargs({ extraHeaders: { "x-c": "3" }, extraBody: { seed: 1 } })).toEqual({
      headers: { "x-c": "3" },
      body: { seed: 1 },
    });
    expect(readClientKwargs({ extra_headers: ["x"], extra_body: "nope" })).toEqual({});
  });
});
