/** Timing, statistics and heap helpers shared by the scenarios. Node built-ins only. */

import { PerformanceObserver } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";

/** Monotonic time in milliseconds (fractional). */
export const now = () => performance.now();

/** CPU time (user + system) of the process in microseconds. */
export function cpuMicros() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

export function median(values) {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The q-quantile (0..1), nearest rank. */
export function percentile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

/** Round to a few significant decimals so the JSON lines stay readable. */
export function round(value, digits = 3) {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Full garbage collection (needs `node --expose-gc`); a few passes so weak and finalised objects go too. */
export async function fullGc() {
  if (typeof globalThis.gc !== "function") {
    throw new Error("Run with `node --expose-gc bench/run.mjs` (the S3 heap figures need global.gc)");
  }
  for (let pass = 0; pass < 3; pass++) {
    globalThis.gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Heap bytes in use after a full GC. */
export async function heapAfterGc() {
  await fullGc();
  return process.memoryUsage().heapUsed;
}

/** Resolve once `condition()` holds, checking after each macrotask; reject after `timeoutMs`. */
export function waitUntil(condition, timeoutMs = 60_000, what = "condition") {
  const deadline = now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (condition()) return resolve();
      if (now() > deadline) return reject(new Error(`Timed out waiting for ${what}`));
      setImmediate(check);
    };
    check();
  });
}

/** Throw when a benchmark run did not do the work it claims to measure. */
export function check(condition, message) {
  if (!condition) throw new Error(`bench sanity check failed: ${message}`);
}

/**
 * Call `runOnce` back to back until at least `minRuns` runs and `minMs` have passed (at most `maxRuns`).
 * Returns the run count, total wall ms, total CPU µs and each run's wall ms.
 */
export async function timeSequentialRuns(runOnce, { minRuns = 50, minMs = 300, maxRuns = 1_000_000 } = {}) {
  const durations = [];
  const cpuStart = cpuMicros();
  const wallStart = now();
  let end = wallStart;
  while (durations.length < maxRuns && (durations.length < minRuns || end - wallStart < minMs)) {
    const start = now();
    await runOnce();
    end = now();
    durations.push(end - start);
  }
  return { runs: durations.length, wallMs: end - wallStart, cpuUs: cpuMicros() - cpuStart, durations };
}

/**
 * Node flags for a child that measures allocation with `allocatedBytes`: --expose-gc, and a young generation
 * large enough (`semiSpaceMb`) that the measured work allocates without a collection.
 */
export function noCollectionFlags(semiSpaceMb = 512) {
  return ["--expose-gc", `--min-semi-space-size=${semiSpaceMb}`, `--max-semi-space-size=${semiSpaceMb}`];
}

/**
 * Heap bytes `work()` allocates, read as the heap's growth across it; only meaningful when nothing was collected
 * meanwhile, so `collections` says how many collections happened (run under `noCollectionFlags()`).
 */
export async function allocatedBytes(work) {
  let collections = 0;
  const observer = new PerformanceObserver((list) => {
    collections += list.getEntries().length;
  });
  globalThis.gc();
  observer.observe({ entryTypes: ["gc"] });
  const before = getHeapStatistics().used_heap_size;
  await work();
  const after = getHeapStatistics().used_heap_size;
  // The observer reports on a later turn.
  await new Promise((done) => setTimeout(done, 10));
  observer.disconnect();
  return { bytes: after - before, collections };
}
