import { StoreUnavailableError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { KeelError } from "../errors/keel-error.js";

/**
 * Store error codes that say "not now" rather than "never": the server went away, the file is locked past the
 * busy timeout, the disk is full, the device failed a write. A store that answers again may take the same call.
 */
const OUTAGE_CODES: ReadonlySet<string> = new Set([
  ERROR_CODES.STORE_CONNECTION,
  ERROR_CODES.STORE_BUSY,
  ERROR_CODES.STORE_DISK_FULL,
  ERROR_CODES.STORE_IO,
]);

/** True for a retryable store error that a store answering again may not repeat (see `OUTAGE_CODES`). */
export function isStoreOutage(error: unknown): error is KeelError {
  return KeelError.isInstance(error) && error.retryable && OUTAGE_CODES.has(error.code);
}

/** How a caller has store calls wait out an outage; stores take it through `SessionScopeOptions.outage`. */
export interface StoreOutageWait {
  /**
   * Run `attempt`, and again after a pause each time it fails with a store outage, until it succeeds or the
   * outage has lasted too long (then `StoreUnavailableError`). `retryIf` may veto a retry for an attempt that
   * got too far to be repeated.
   */
  run<T>(operation: string, attempt: () => Promise<T>, options?: { retryIf?: () => boolean }): Promise<T>;
}

/** Options of {@link StoreOutage}. */
export interface StoreOutageOptions {
  /** How long an outage is waited out, from the first failure seen, before calls fail. */
  outageMs: number;
  /** Stops the waiting: the call then fails with the store's own error. */
  signal?: AbortSignal | undefined;
  /** The first pause between attempts. Default 50. */
  initialDelayMs?: number;
  /** The longest pause: how late a caller may notice that the store answers again. Default 500. */
  maxDelayMs?: number;
}

/**
 * One run's patience with its store. Every call made through it shares one clock: an outage starts at the first
 * failure any of them sees and ends at the first success, so calls that keep meeting the same outage (a
 * checkpoint, then the run's final record) do not each wait the whole `outageMs` again. The pauses double up to
 * `maxDelayMs`, with jitter so that many runs waiting on one server do not come back in lockstep.
 */
export class StoreOutage implements StoreOutageWait {
  private since: number | null = null;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly options: StoreOutageOptions) {
    this.initialDelayMs = options.initialDelayMs ?? 50;
    this.maxDelayMs = options.maxDelayMs ?? 500;
  }

  /** True once an outage has outlasted `outageMs` and no call has succeeded since. */
  get exhausted(): boolean {
    return this.since !== null && Date.now() - this.since >= this.options.outageMs;
  }

  async run<T>(
    operation: string,
    attempt: () => Promise<T>,
    options: { retryIf?: () => boolean } = {},
  ): Promise<T> {
    const { signal, outageMs } = this.options;
    for (let tries = 0; ; tries++) {
      try {
        const result = await attempt();
        this.since = null;
        return result;
      } catch (error) {
        if (!isStoreOutage(error) || options.retryIf?.() === false) throw error;
        const now = Date.now();
        this.since ??= now;
        const left = this.since + outageMs - now;
        if (left <= 0) throw unavailable(operation, error, outageMs);
        if (signal?.aborted) throw error;
        const pause = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** Math.min(tries, 16));
        await sleep(Math.min(left, pause * (0.5 + Math.random() / 2)), signal);
      }
    }
  }
}

function unavailable(operation: string, error: KeelError, outageMs: number): StoreUnavailableError {
  return new StoreUnavailableError(
    `The session store did not answer for ${outageMs} ms (${operation}): ${error.message}`,
    {
      cause: error,
      hint:
        "The run stopped at its latest checkpoint and can be resumed once the store answers again " +
        "(Runtime.resume, or `keel resume`); raise durable.store_outage_ms to wait longer. " +
        (error.hint ?? ""),
      context: { operation, outageMs, storeCode: error.code },
    },
  );
}

/** Resolves after `ms`, or at once when `signal` aborts (the caller then sees its own next failure). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
