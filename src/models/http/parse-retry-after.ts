/**
 * How long a server asked to wait, in ms: `retry-after-ms` (sent by OpenAI), else `Retry-After` as seconds or
 * an HTTP date. Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(headers: Headers, nowMs: number): number | undefined {
  const milliseconds = headers.get("retry-after-ms");
  if (milliseconds !== null && /^\s*\d+(\.\d+)?\s*$/.test(milliseconds)) {
    return Math.ceil(Number(milliseconds));
  }
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
