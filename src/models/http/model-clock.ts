/**
 * Time as the HTTP providers see it: `now` for the retry budget, `sleep` for backoff, `random` for jitter.
 * Tests pass a fake one so that backoff never waits in real time.
 */
export interface ModelClock {
  now(): number;
  /** Resolve after `ms`; reject with the signal's reason as soon as it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
}

/** The real clock. */
export const systemClock: ModelClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
  random: () => Math.random(),
};
