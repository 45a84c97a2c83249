/**
 * The small values `EVENT_SCHEMAS` writes each payload key's type with. One marker is one frozen object: its
 * `name` is what `docs/events.md` shows, `is` a shallow check tests run over emitted payloads, and its type
 * parameter is what `EventPayloads` reads back — so the key lists, the TypeScript types and the docs come from
 * the same rows. Making one costs an object, not a validator: nothing here is checked when an event is emitted.
 */

// Type-only: carries the field's TypeScript type without a property that exists at runtime.
declare const FIELD_TYPE: unique symbol;

/** The type of one payload key, as a value. */
export interface PayloadField<T> {
  /** The type as the docs write it (`string`, `RunResult`, `"ok" | "error"`). */
  readonly name: string;
  /** Whether a value has this type as far as a shallow check can tell (an object is not looked into). */
  readonly is: (value: unknown) => boolean;
  readonly [FIELD_TYPE]?: T;
}

/** The TypeScript type a marker stands for. */
export type FieldTypeOf<F> = F extends PayloadField<infer T> ? T : never;

function field<T>(name: string, is: (value: unknown) => boolean): PayloadField<T> {
  return Object.freeze({ name, is });
}

function isObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export const str = field<string>("string", (value) => typeof value === "string");
export const num = field<number>("number", (value) => typeof value === "number");
export const bool = field<boolean>("boolean", (value) => typeof value === "boolean");
/** Any value at all (a tool's result, a decision's value). */
export const anyValue = field<unknown>("unknown", () => true);
/** A plain object of values: a tool call's arguments. */
export const record = field<Record<string, unknown>>("object", isObject);

/** A list of `item`. */
export function list<T>(item: PayloadField<T>): PayloadField<T[]> {
  return field<T[]>(`${item.name}[]`, (value) => Array.isArray(value) && value.every(item.is));
}

/** One of a few strings. */
export function oneOf<const T extends readonly string[]>(...values: T): PayloadField<T[number]> {
  return field<T[number]>(values.map((value) => `"${value}"`).join(" | "), (value) =>
    values.includes(value as string),
  );
}

/** `inner` under the name of the exported type it equals (`ResumeMode`), for shorter docs. */
export function named<T>(name: string, inner: PayloadField<T>): PayloadField<T> {
  return field<T>(name, inner.is);
}

/** `inner`, or null. */
export function orNull<T>(inner: PayloadField<T>): PayloadField<T | null> {
  return field<T | null>(`${inner.name} | null`, (value) => value === null || inner.is(value));
}

/** `inner`, or `extra`. */
export function either<A, B>(inner: PayloadField<A>, extra: PayloadField<B>): PayloadField<A | B> {
  return field<A | B>(`${inner.name} | ${extra.name}`, (value) => inner.is(value) || extra.is(value));
}

/** An object of a named TypeScript type (`RunResult`, `ErrorDetails`); checked only as an object. */
export function typed<T extends object>(name: string): PayloadField<T> {
  return field<T>(name, isObject);
}
