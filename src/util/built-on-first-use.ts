/**
 * A value made the first time it is asked for, then kept. Keel's builtin config schemas are made this way: a
 * zod schema costs a few dozen objects and closures to build, and building all of them when the package is
 * imported cost more than the rest of the import. Most programs configure a handful of builtins; the rest are
 * never built.
 */
export function builtOnFirstUse<T>(build: () => T): () => T {
  let value: T | undefined;
  let built = false;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}
