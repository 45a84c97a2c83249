import { ERROR_CODES } from "../errors/error-codes.js";
import { KeelError } from "../errors/keel-error.js";
import { getLogger } from "../logging/logger.js";
import { toJsonSafe } from "../tools/to-json-value.js";
import { isStoreOutage } from "./store-outage.js";

/**
 * One store write of values meant to be JSON. Tool results are checked where they enter, but an event a hook or
 * a tool emits may still hold a BigInt or a cycle, and a persistent store's JSON.stringify would then refuse the
 * whole write: the run's events, transcript or checkpoint would be gone while an in-memory store, which keeps
 * values as they are, shows nothing wrong. Such a write is tried once more with those values described
 * (`"[Circular $.a]"`, a BigInt as a number or a decimal string) and a warning says so. A write that fails for
 * any other reason (nothing to describe) fails as it did. The stores serialise before they write, so the first
 * attempt left nothing behind.
 */
export async function storeAsJson<T>(options: {
  runId: string;
  what: string;
  values: T;
  write: (values: T) => Promise<unknown>;
}): Promise<void> {
  const { runId, what, values, write } = options;
  try {
    await write(values);
  } catch (error) {
    await write(describedOrThrow(error, values, { runId, what }));
  }
}

/** {@link storeAsJson} with a write that is done when it returns (the in-memory store's immediate writes). */
// biome-ignore lint/complexity/useMaxParams: a few calls at every run's end, whose cost is what this path cuts; an options object each would be one more allocation
export function storeAsJsonNow<T>(runId: string, what: string, values: T, write: (values: T) => void): void {
  try {
    write(values);
  } catch (error) {
    write(describedOrThrow(error, values, { runId, what }));
  }
}

/** The values to try again after a failed write, described for JSON; or the write's error, when that cannot help. */
function describedOrThrow<T>(error: unknown, values: T, about: { runId: string; what: string }): T {
  const { runId, what } = about;
  // A store that is away is no reason to describe the values: the warning would blame them wrongly.
  if (isStoreOutage(error) || (KeelError.isInstance(error) && error.code === ERROR_CODES.STORE_UNAVAILABLE))
    throw error;
  const safe = toJsonSafe(values) as T;
  if (safe === values) throw error;
  getLogger().warn(
    `Run ${runId}: its ${what} held values JSON cannot hold; they are stored as descriptions of themselves`,
    { runId, cause: error },
  );
  return safe;
}
