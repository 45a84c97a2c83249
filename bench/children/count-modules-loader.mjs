/** A module loader hook that counts what loads: one line per module on stderr (start-up scenario). */
export async function load(url, context, next) {
  process.stderr.write(`keel-bench-module ${url}\n`);
  return next(url, context);
}
