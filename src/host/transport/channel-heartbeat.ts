import { KeelError } from "../../errors/keel-error.js";

export interface HeartbeatOptions {
  /** Time between pings, and how long each waits for its pong. */
  intervalMs: number;
  /** Pongs missed in a row before the channel is declared lost; 3. */
  missLimit?: number;
}

/** The heartbeat a host keeps with a plugin runtime it attached over a real transport: a ping every 20 s. */
export const DEFAULT_HEARTBEAT: Readonly<Required<HeartbeatOptions>> = Object.freeze({
  intervalMs: 20_000,
  missLimit: 3,
});

/** The peer stopped answering pings: the channel is lost though the wire may still look open. */
export class HeartbeatLostError extends KeelError {
  readonly missed: number;
  constructor(missed: number, intervalMs: number) {
    super(`the peer answered none of ${missed} pings (one every ${intervalMs} ms)`, {
      code: "host.heartbeat_lost",
      retryable: true,
      hint: "The other process is hung or stopped; restart it or attach it again",
    });
    this.missed = missed;
  }
}

/** What the heartbeat needs of a channel. */
export interface Pingable {
  /** True when the peer answered within `timeoutMs` (with anything, an error too: it is alive). */
  ping(timeoutMs: number): Promise<boolean>;
  /** Declares the channel lost with `error`. */
  lose(error: Error): Promise<void>;
  readonly closed: boolean;
}

/**
 * Pings the peer every `intervalMs`, each ping waiting at most that long, and declares the channel lost after
 * `missLimit` pings in a row went unanswered — a process that is stopped or hung keeps its pipe open, so only
 * silence tells. One ping at a time: the next is sent after the previous settles. Returns a function that stops
 * it. The timers never keep the process alive.
 */
export function startHeartbeat(channel: Pingable, options: HeartbeatOptions): () => void {
  const { intervalMs } = options;
  const missLimit = options.missLimit ?? DEFAULT_HEARTBEAT.missLimit;
  if (!(intervalMs > 0) || !Number.isSafeInteger(missLimit) || missLimit < 1) {
    throw new KeelError("heartbeat: intervalMs must be > 0 and missLimit an integer ≥ 1", {
      code: "host.config",
    });
  }
  let stopped = false;
  let missed = 0;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopped || channel.closed) return;
    timer = setTimeout(beat, intervalMs);
    timer.unref?.();
  };
  const beat = async () => {
    if (stopped || channel.closed) return;
    const answered = await channel.ping(intervalMs);
    if (stopped || channel.closed) return;
    missed = answered ? 0 : missed + 1;
    if (missed >= missLimit) {
      stopped = true;
      await channel.lose(new HeartbeatLostError(missed, intervalMs));
      return;
    }
    schedule();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
