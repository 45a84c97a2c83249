/** The last time formatted, and the millisecond it was formatted for. */
let formattedMs = Number.NaN;
let formatted = "";

/**
 * `new Date().toISOString()`, formatted once per millisecond. Formatting a date costs about a microsecond, and a
 * run stamps its record when it starts and when it ends; short runs back to back stamp the same millisecond many
 * times over. The clock is read every call, so the text is always the current millisecond's.
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== formattedMs) {
    formatted = new Date(ms).toISOString();
    formattedMs = ms;
  }
  return formatted;
}
