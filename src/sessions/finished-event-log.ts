import { RuntimeEvent } from "../contracts/runtime-event.js";

/**
 * The event log of a run that finished, as the in-memory store keeps it: the events' fields in columns and their
 * payloads by reference. A finished run's log is only read again, and a thousand of them are kept by default; an
 * event object per entry (seven fields, three of them the same for the whole log) was a third of what such a run
 * held. `events()` makes the event objects again, with the same values and the same payload objects.
 */
export class FinishedEventLog {
  private readonly firstSequence: number;
  private readonly runId: string;
  private readonly sessionId: string;
  private readonly agentId: string;
  private readonly kinds: readonly string[];
  private readonly times: readonly number[];
  private readonly payloads: readonly Record<string, unknown>[];

  private constructor(
    first: RuntimeEvent,
    columns: { kinds: readonly string[]; times: number[]; payloads: Record<string, unknown>[] },
  ) {
    this.firstSequence = first.sequence;
    this.runId = first.runId;
    this.sessionId = first.sessionId;
    this.agentId = first.agentId;
    this.kinds = columns.kinds;
    this.times = columns.times;
    this.payloads = columns.payloads;
  }

  /**
   * The log in columns, or null when it does not fit them: sequences that do not follow one another, or events of
   * more than one run, session or agent (what `appendEvents` was given is kept as it was).
   */
  static of(events: readonly RuntimeEvent[]): FinishedEventLog | null {
    const count = events.length;
    if (count === 0) return null;
    const first = events[0] as RuntimeEvent;
    const { runId, sessionId, agentId } = first;
    // Most logs have the kinds of the one before: compared while reading, they need no array of their own.
    const last = lastKinds;
    let sameAsLast = last !== null && last.length === count;
    const times = new Array<number>(count);
    const payloads = new Array<Record<string, unknown>>(count);
    for (let index = 0; index < count; index++) {
      const event = events[index] as RuntimeEvent;
      if (
        event.sequence !== first.sequence + index ||
        event.runId !== runId ||
        event.sessionId !== sessionId ||
        event.agentId !== agentId ||
        event.constructor !== RuntimeEvent
      )
        return null;
      if (sameAsLast && (last as readonly string[])[index] !== event.kind) sameAsLast = false;
      times[index] = event.timestampMs;
      payloads[index] = event.payload;
    }
    const kinds = sameAsLast ? (last as readonly string[]) : sharedKinds(events.map(kindOf));
    lastKinds = kinds;
    return new FinishedEventLog(first, { kinds, times, payloads });
  }

  get length(): number {
    return this.kinds.length;
  }

  /** The sequence of the last event. */
  get lastSequence(): number {
    return this.firstSequence + this.kinds.length - 1;
  }

  /** The events with a sequence above `afterSequence` (all without it), in order, as new event objects. */
  events(afterSequence?: number): RuntimeEvent[] {
    const from = afterSequence === undefined ? 0 : Math.max(0, afterSequence - this.firstSequence + 1);
    const count = Math.max(0, this.kinds.length - from);
    const events = new Array<RuntimeEvent>(count);
    for (let index = 0; index < count; index++) {
      const at = from + index;
      events[index] = new RuntimeEvent(
        this.kinds[at] as string,
        this.payloads[at] as Record<string, unknown>,
        this.times[at] as number,
        this.runId,
        this.sessionId,
        this.agentId,
        this.firstSequence + at,
      );
    }
    return events;
  }
}

/**
 * Runs of one agent mostly emit the same kinds in the same order, so their logs share one array of kinds: the last
 * few arrays made are compared entry by entry (the kinds are mostly the same string objects), with nothing
 * allocated to look them up. Sharing is a saving, not a promise.
 */
const recentKinds: (readonly string[])[] = [];
const RECENT_KIND_LISTS = 8;
/** The kinds of the last log put in columns (one of `recentKinds`). */
let lastKinds: readonly string[] | null = null;

const kindOf = (event: RuntimeEvent): string => event.kind;

function sharedKinds(kinds: string[]): readonly string[] {
  for (const known of recentKinds) if (sameKinds(known, kinds)) return known;
  if (recentKinds.length >= RECENT_KIND_LISTS) recentKinds.pop();
  recentKinds.unshift(kinds);
  return kinds;
}

function sameKinds(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}
