/**
 * `loadRunMessages`' `length` as an exclusive bound on message indexes, for stores that filter in SQL: null
 * for the whole transcript. A fraction is cut like `slice` cuts it; below zero there is nothing to load.
 */
export function transcriptBound(length: number | undefined): number | null {
  if (length === undefined || length >= 2 ** 31) return null;
  return Number.isNaN(length) ? 0 : Math.max(0, Math.trunc(length));
}
