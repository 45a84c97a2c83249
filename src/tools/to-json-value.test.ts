import { describe, expect, it } from "vitest";
import { toJsonSafe, toJsonValue } from "./to-json-value.js";

function converted(value: unknown): unknown {
  const outcome = toJsonValue(value);
  if (!outcome.ok) throw new Error(`expected a JSON form, got ${JSON.stringify(outcome.problem)}`);
  // Whatever comes back must survive the stores' JSON.stringify and parse unchanged.
  const text = JSON.stringify(outcome.value);
  if (text !== undefined) expect(JSON.stringify(JSON.parse(text))).toBe(text);
  return outcome.value;
}

function problem(value: unknown) {
  const outcome = toJsonValue(value);
  if (outcome.ok) throw new Error(`expected no JSON form, got ${JSON.stringify(outcome.value)}`);
  return outcome.problem;
}

describe("toJsonValue", () => {
  it("returns JSON data itself, not a copy", () => {
    const data = { a: [1, "two", true, null, { b: 2.5 }], c: "x" };
    expect(toJsonValue(data)).toEqual({ ok: true, value: data });
    expect((toJsonValue(data) as { value: unknown }).value).toBe(data);
    expect(converted("text")).toBe("text");
    expect(converted(undefined)).toBeUndefined();
  });

  it("turns a BigInt into a number when it is safe and into a decimal string when it is not", () => {
    expect(converted({ n: 10n })).toEqual({ n: 10 });
    expect(converted(-(2n ** 53n - 1n))).toBe(-(2 ** 53 - 1));
    expect(converted({ big: 2n ** 64n })).toEqual({ big: "18446744073709551616" });
    expect(converted(new BigInt64Array([1n, -2n]))).toEqual([1, -2]);
  });

  it("turns a Map into an object, or into entries when a key is not a string; a Set into an array", () => {
    expect(
      converted(
        new Map<string, unknown>([
          ["a", 1],
          ["b", new Set([1, 2])],
        ]),
      ),
    ).toEqual({
      a: 1,
      b: [1, 2],
    });
    expect(
      converted(
        new Map<unknown, unknown>([
          [1, "one"],
          [{ k: 2 }, 10n],
        ]),
      ),
    ).toEqual([
      [1, "one"],
      [{ k: 2 }, 10],
    ]);
    const proto = converted(new Map([["__proto__", 1]])) as Record<string, unknown>;
    expect(Object.keys(proto)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
  });

  it("honours toJSON (a Date becomes its ISO string) and converts what it returns", () => {
    expect(converted({ at: new Date("2024-05-01T10:00:00Z") })).toEqual({ at: "2024-05-01T10:00:00.000Z" });
    expect(converted({ v: { toJSON: () => ({ n: 3n }) } })).toEqual({ v: { n: 3 } });
    expect(converted(new URL("https://example.com/a?b=1"))).toBe("https://example.com/a?b=1");
  });

  it("turns bytes into base64 and other typed arrays into arrays of numbers", () => {
    expect(converted({ file: Buffer.from("hello") })).toEqual({ file: { base64: "aGVsbG8=" } });
    expect(converted(new Uint8Array([1, 2, 255]))).toEqual({ base64: "AQL/" });
    expect(converted(new Uint8Array([104, 105]).buffer)).toEqual({ base64: "aGk=" });
    expect(converted(new Float32Array([0.5, 2]))).toEqual([0.5, 2]);
  });

  it("keeps the JSON rules for undefined and names what JSON would lose", () => {
    expect(converted({ a: undefined, b: [undefined, 1] })).toEqual({ b: [null, 1] });
    expect(converted([Number.NaN, Number.POSITIVE_INFINITY, 1])).toEqual(["NaN", "Infinity", 1]);
    expect(converted(/ab+c/gi)).toBe("/ab+c/gi");
    expect(converted(Object.assign(new Error("boom"), { code: "E_X" }))).toEqual({
      name: "Error",
      message: "boom",
      code: "E_X",
    });
    expect(converted([new String("s"), new Number(2), new Boolean(false)])).toEqual(["s", 2, false]);
  });

  it("repeats a shared object, as JSON does, but refuses a cycle and says where it is", () => {
    const shared = { x: 1 };
    expect(converted({ a: shared, b: [shared] })).toEqual({ a: { x: 1 }, b: [{ x: 1 }] });
    const cyclic: Record<string, unknown> = { a: { list: [] as unknown[] } };
    (cyclic.a as { list: unknown[] }).list.push(cyclic);
    expect(problem(cyclic)).toEqual({ path: "$.a.list[0]", reason: "a circular reference (back to $)" });
    const self: Record<string, unknown> = { n: 10n };
    self.self = self;
    expect(problem(self).path).toBe("$.self");
  });

  it("refuses functions, symbols, promises and weak collections, naming the path", () => {
    expect(problem({ run() {} })).toEqual({ path: "$.run", reason: "a function (run)" });
    expect(problem(() => 1).path).toBe("$");
    expect(problem({ "a-b": [Symbol("s")] })).toEqual({
      path: '$["a-b"][0]',
      reason: "a symbol (Symbol(s))",
    });
    expect(problem({ p: Promise.resolve(1) }).reason).toBe("a Promise (await it before returning)");
    expect(problem(new WeakMap()).reason).toBe("a WeakMap");
  });

  it("refuses a value whose getter throws instead of throwing itself", () => {
    const value = {
      get broken(): never {
        throw new Error("no access");
      },
    };
    expect(problem(value)).toEqual({ path: "$", reason: "reading it threw: no access" });
  });

  it("ignores symbol keys and prototype methods, as JSON does", () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
      norm(): number {
        return Math.hypot(this.x, this.y);
      }
    }
    const value = { p: new Point(3, 4), [Symbol("meta")]: 1 };
    expect(converted(value)).toBe(value);
    expect(JSON.stringify(converted(value))).toBe('{"p":{"x":3,"y":4}}');
  });
});

describe("toJsonSafe", () => {
  it("describes what has no JSON form instead of failing", () => {
    const self: Record<string, unknown> = { n: 10n, f: function named() {}, m: new Map([["k", 1]]) };
    self.self = self;
    expect(toJsonSafe(self)).toEqual({ n: 10, f: "[Function named]", m: { k: 1 }, self: "[Circular $]" });
    expect(toJsonSafe({ s: Symbol("x") })).toEqual({ s: "[Symbol(x)]" });
  });
});
