import { ConfigError } from "../../errors/error-classes.js";

/**
 * How a connecting side retries a lost connection: each wait doubles from `initialDelayMs` up to `maxDelayMs`,
 * and a random part of it (`jitter`) is taken off, so many hosts that lost one runtime at once do not all come
 * back in the same instant.
 */
export interface ReconnectPolicy {
  /** The wait before the first attempt; 100 ms. */
  initialDelayMs: number;
  /** The longest wait between attempts; 10 s. */
  maxDelayMs: number;
  /** Attempts before giving up; unlimited by default, as a runtime that restarts may take a while. */
  maxAttempts: number;
  /** The share of each wait that is random, 0 to 1; 0.5. */
  jitter: number;
}

export const DEFAULT_RECONNECT_POLICY: Readonly<ReconnectPolicy> = Object.freeze({
  initialDelayMs: 100,
  maxDelayMs: 10_000,
  maxAttempts: Number.POSITIVE_INFINITY,
  jitter: 0.5,
});

/** The wait before attempt `attempt` (from 1): between (1 − jitter) and 1 times the capped doubling delay. */
export function reconnectDelayMs(
  attempt: number,
  policy: ReconnectPolicy = DEFAULT_RECONNECT_POLICY,
  random: () => number = Math.random,
): number {
  const base = Math.min(
    policy.maxDelayMs,
    policy.initialDelayMs * 2 ** Math.min(Math.max(0, attempt - 1), 30),
  );
  return Math.round(base * (1 - policy.jitter * random()));
}

/** A policy from partial options; a negative or non-number value is refused. */
export function reconnectPolicyOf(options: Partial<ReconnectPolicy> = {}): ReconnectPolicy {
  const policy: ReconnectPolicy = { ...DEFAULT_RECONNECT_POLICY, ...options };
  for (const [name, value] of Object.entries(policy)) {
    if (typeof value !== "number" || Number.isNaN(value) || value < 0 || (name === "jitter" && value > 1)) {
      throw new ConfigError(`reconnect.${name} is ${String(value)}`, {
        hint: "delays and attempts are numbers ≥ 0, jitter is between 0 and 1",
      });
    }
  }
  policy.maxDelayMs = Math.max(policy.maxDelayMs, policy.initialDelayMs);
  return policy;
}
