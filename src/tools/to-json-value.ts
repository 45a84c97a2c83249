/**
 * Tool results cross into the transcript, the events and every persistent store as JSON. `JSON.stringify` alone
 * throws on a BigInt or a cycle (losing the run's whole final write) and silently turns a Map or a Set into `{}`;
 * an in-memory store keeps the value as it is, so such a result works in development and breaks in production.
 * Here a value is brought to a JSON form once, at the tool boundary: what has a faithful JSON form is converted,
 * the rest is named so the call can fail with a reason the model and the developer can act on.
 */

/** Why a value has no JSON form, and where in it the offending part sits (`$.items[2].owner`). */
export interface NotJson {
  path: string;
  reason: string;
}

export type JsonConversion = { ok: true; value: unknown } | { ok: false; problem: NotJson };

/**
 * A JSON form of `value` that `JSON.stringify` writes as it is, or why there is none.
 * Returns `value` itself (no copy) when it is JSON already. Conversions: a BigInt becomes a number when it is a
 * safe integer and a decimal string otherwise; `toJSON` is honoured (a Date becomes its ISO string); a Map
 * becomes an object when all its keys are strings and an array of `[key, value]` pairs otherwise; a Set becomes
 * an array; bytes (Buffer, Uint8Array, ArrayBuffer, DataView) become `{ base64 }`; other typed arrays become
 * arrays of numbers; a non-finite number becomes its name ("NaN", "Infinity"); an Error becomes its name and
 * message; a RegExp its source text; a boxed primitive its value. `undefined` follows JSON: an object drops the
 * key, an array holds `null`. Cycles, functions, symbols, promises and weak collections have no JSON form.
 */
export function toJsonValue(value: unknown): JsonConversion {
  try {
    return { ok: true, value: convert(value, "$", { ancestors: [], onNotJson: strict }) };
  } catch (error) {
    if (error instanceof NotJsonError) return { ok: false, problem: error.problem };
    // A getter or a toJSON that throws: the value cannot be read, so it has no JSON form either.
    return { ok: false, problem: { path: "$", reason: `reading it threw: ${(error as Error)?.message}` } };
  }
}

/**
 * Like {@link toJsonValue}, but never fails: what has no JSON form becomes a marker string (`"[Circular $.a]"`,
 * `"[Function f]"`, `"[Symbol(x)]"`). For the last line of defence before a store, where losing a run's events
 * to one value would be worse than recording that value as a description.
 */
export function toJsonSafe(value: unknown): unknown {
  try {
    return convert(value, "$", { ancestors: [], onNotJson: lenient });
  } catch (error) {
    return `[Unreadable: ${(error as Error)?.message}]`;
  }
}

/** What to do with a part that has no JSON form: throw (strict) or describe it (lenient). */
type OnNotJson = (problem: NotJson, marker: string) => unknown;

class NotJsonError extends Error {
  constructor(readonly problem: NotJson) {
    super(`${problem.reason} at ${problem.path}`);
  }
}

const strict: OnNotJson = (problem) => {
  throw new NotJsonError(problem);
};

const lenient: OnNotJson = (_problem, marker) => marker;

/**
 * What one conversion carries down the value: `ancestors` are the objects on the path from the root (a value met
 * again among them is a cycle; one met again elsewhere is only shared, and JSON repeats it). One per top-level
 * call, so walking the value allocates nothing for it per node.
 */
interface Walk {
  ancestors: object[];
  onNotJson: OnNotJson;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function child(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** One value to its JSON form. */
function convert(value: unknown, path: string, walk: Walk): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "undefined":
      return value;
    case "number":
      return Number.isFinite(value) ? value : String(value);
    case "bigint":
      return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(value)
        : value.toString();
    case "function":
      return walk.onNotJson(
        { path, reason: `a function (${value.name || "anonymous"})` },
        `[Function ${value.name || "anonymous"}]`,
      );
    case "symbol":
      return walk.onNotJson({ path, reason: `a symbol (${String(value)})` }, `[${String(value)}]`);
  }
  if (value === null) return null;
  const object = value as object;
  const { ancestors } = walk;
  if (ancestors.includes(object)) {
    const at = ancestorPath(path, ancestors.indexOf(object), ancestors.length);
    return walk.onNotJson({ path, reason: `a circular reference (back to ${at})` }, `[Circular ${at}]`);
  }
  ancestors.push(object);
  try {
    return convertObject(object, path, walk);
  } finally {
    ancestors.pop();
  }
}

/** Where a cycle points back to: the path is cut to the ancestor's depth (a best effort for messages). */
function ancestorPath(path: string, index: number, depth: number): string {
  let cut = path;
  for (let level = depth; level > index; level--) {
    const at = Math.max(cut.lastIndexOf("."), cut.lastIndexOf("["));
    if (at <= 0) return "$";
    cut = cut.slice(0, at);
  }
  return cut;
}

function convertObject(object: object, path: string, walk: Walk): unknown {
  if (Array.isArray(object)) return convertArray(object, path, walk);
  // Bytes before toJSON: a Buffer's own toJSON is `{ type, data: [every byte as a number] }`.
  if (object instanceof Uint8Array) return { base64: Buffer.from(object).toString("base64") };
  if (object instanceof ArrayBuffer) return { base64: Buffer.from(object).toString("base64") };
  if (object instanceof DataView)
    return { base64: Buffer.from(object.buffer, object.byteOffset, object.byteLength).toString("base64") };
  if (ArrayBuffer.isView(object)) {
    const items = Array.from(object as unknown as ArrayLike<number | bigint>);
    return convertArray(items, path, walk);
  }
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    const replaced: unknown = toJSON.call(object, path === "$" ? "" : path);
    return convert(replaced, path, walk);
  }
  if (object instanceof Map) return convertMap(object, path, walk);
  if (object instanceof Set) return convertArray(Array.from(object), path, walk);
  if (object instanceof Error) return convertError(object, path, walk);
  if (object instanceof RegExp) return String(object);
  if (object instanceof String || object instanceof Number || object instanceof Boolean)
    return convert(object.valueOf(), path, walk);
  if (object instanceof Promise)
    return walk.onNotJson({ path, reason: "a Promise (await it before returning)" }, "[Promise]");
  if (object instanceof WeakMap || object instanceof WeakSet || object instanceof WeakRef)
    return walk.onNotJson({ path, reason: `a ${object.constructor.name}` }, `[${object.constructor.name}]`);
  return convertRecord(object as Record<string, unknown>, path, walk);
}

/** An array, copied only when an item changes; `undefined` items become null as in JSON. */
function convertArray(items: readonly unknown[], path: string, walk: Walk) {
  let copy: unknown[] | undefined;
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    let converted = convert(item, child(path, index), walk);
    if (converted === undefined) converted = null;
    if (converted !== item && copy === undefined) copy = items.slice(0, index);
    if (copy !== undefined) copy.push(converted);
  }
  return copy ?? items;
}

/** A plain object (or an instance): its own enumerable string keys, as JSON takes them. */
function convertRecord(record: Record<string, unknown>, path: string, walk: Walk): unknown {
  const keys = Object.keys(record);
  let copy: Record<string, unknown> | undefined;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    const item = record[key];
    const converted = convert(item, child(path, key), walk);
    if (converted !== item && copy === undefined) {
      copy = {};
      for (let before = 0; before < index; before++) define(copy, keys[before]!, record[keys[before]!]);
    }
    if (copy !== undefined && converted !== undefined) define(copy, key, converted);
  }
  // Unchanged, even a class instance: JSON takes the same own keys from it as from a copy.
  return copy ?? record;
}

/** A Map: an object when every key is a string, else `[key, value]` pairs. */
function convertMap(map: Map<unknown, unknown>, path: string, walk: Walk): unknown {
  const allStrings = Array.from(map.keys()).every((key) => typeof key === "string");
  if (allStrings) {
    const object: Record<string, unknown> = {};
    for (const [key, item] of map) {
      const converted = convert(item, child(path, key as string), walk);
      if (converted !== undefined) define(object, key as string, converted);
    }
    return object;
  }
  return convertArray(Array.from(map.entries()), path, walk);
}

function convertError(error: Error, path: string, walk: Walk): unknown {
  const shown: Record<string, unknown> = { name: error.name, message: error.message };
  const fields = convertRecord(error as unknown as Record<string, unknown>, path, walk);
  for (const [key, item] of Object.entries(fields as Record<string, unknown>)) {
    if (item !== undefined) define(shown, key, item);
  }
  return shown;
}

/** A plain property even for a key like `__proto__`, which an assignment would treat as the prototype. */
function define(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}
