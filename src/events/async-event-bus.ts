import { type EventBus, type EventHandler, RuntimeEvent } from "../contracts/runtime-event.js";
import { getLogger } from "../logging/logger.js";
import { checkEventPayload, getEventSchema, hasRequiredPayload } from "./event-schemas.js";

/**
 * Events the bus keeps for `getHistory()` by default. Every event in the ring is still alive at the next scavenge,
 * so the ring's size is copied by the collector over and over: 10,000 events (about 130 runs of ten tool calls)
 * doubled what a busy process's scavenges copied, for a debugging aid nothing in Keel reads.
 */
export const DEFAULT_MAX_HISTORY = 1000;

/** Options of {@link AsyncEventBus}. */
export interface AsyncEventBusOptions {
  /** Events kept for `getHistory()`, oldest dropped first; 0 keeps none. Default 1,000. */
  maxHistory?: number;
}

/** One subscription; `active` lets an unsubscribe during dispatch skip a handler not yet called. */
interface Subscription {
  readonly handler: EventHandler;
  active: boolean;
}

const NO_SUBSCRIPTIONS: readonly Subscription[] = [];

/**
 * The default event bus (type `async`): handlers for the exact name, then `*` handlers, called synchronously in
 * subscription order. A handler's promise is not awaited by `publish` (a slow subscriber never stalls a run) but
 * is tracked so `flush()` can wait for it. Handler errors are logged and swallowed.
 */
export class AsyncEventBus implements EventBus {
  /** The history ring's capacity. */
  readonly maxHistory: number;
  // The ring grows by push until full and then overwrites at `historyNext`, so it never shifts.
  private history: RuntimeEvent[] = [];
  private historyNext = 0;
  // Handler lists are replaced, never mutated, so a dispatch in progress iterates a stable array.
  private readonly byName = new Map<string, readonly Subscription[]>();
  private wildcard: readonly Subscription[] = NO_SUBSCRIPTIONS;
  private readonly pending = new Set<Promise<void>>();

  constructor(options: AsyncEventBusOptions = {}) {
    const maxHistory = options.maxHistory ?? DEFAULT_MAX_HISTORY;
    if (!Number.isInteger(maxHistory) || maxHistory < 0) {
      throw new RangeError(`maxHistory must be a non-negative integer, got ${maxHistory}`);
    }
    this.maxHistory = maxHistory;
  }

  /** Subscribe to one event name or `"*"`; the returned function unsubscribes (calling it twice is harmless). */
  subscribe(name: string, handler: EventHandler): () => void {
    const subscription: Subscription = { handler, active: true };
    if (name === "*") this.wildcard = [...this.wildcard, subscription];
    else this.byName.set(name, [...(this.byName.get(name) ?? NO_SUBSCRIPTIONS), subscription]);
    return () => this.unsubscribe(name, subscription);
  }

  /** Build an event outside any run, stamped now, check its payload against `EVENT_SCHEMAS`, and publish it. */
  emit(name: string, payload?: Record<string, unknown>): RuntimeEvent {
    const event = new RuntimeEvent(name, payload ?? {}, Date.now());
    const schema = getEventSchema(name);
    if (schema !== undefined && !hasRequiredPayload(schema, event.payload)) this.warnMissing(event);
    this.publish(event);
    return event;
  }

  /**
   * Record the event in the history and deliver it to its handlers. Never throws for a handler's sake. The
   * payload is not checked here: run events are checked where user code emits them (`PatternDriver.emit`).
   */
  publish(event: RuntimeEvent): void {
    if (this.maxHistory > 0) this.remember(event);
    const named = this.byName.get(event.kind);
    if (named !== undefined) this.dispatch(named, event);
    if (this.wildcard.length > 0) this.dispatch(this.wildcard, event);
  }

  /** Recorded events, oldest first, optionally only one name and only the newest `limit`. */
  getHistory(options: { name?: string; limit?: number } = {}): RuntimeEvent[] {
    const { name, limit } = options;
    const size = this.history.length;
    const wanted = limit === undefined ? size : Math.max(0, Math.min(limit, size));
    const newestFirst: RuntimeEvent[] = [];
    // Walk back from the newest so a small `limit` stops early on a full ring.
    for (let offset = 1; offset <= size && newestFirst.length < wanted; offset++) {
      const event = this.history[(this.historyNext - offset + size) % size] as RuntimeEvent;
      if (name === undefined || event.kind === name) newestFirst.push(event);
    }
    return newestFirst.reverse();
  }

  /** Forget every recorded event. */
  clearHistory(): void {
    this.history = [];
    this.historyNext = 0;
  }

  /** Resolve once every handler promise (including ones started while waiting) has settled. */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
  }

  /** Wait for running handlers, then drop every subscription. */
  async close(): Promise<void> {
    await this.flush();
    for (const list of this.byName.values()) deactivate(list);
    deactivate(this.wildcard);
    this.byName.clear();
    this.wildcard = NO_SUBSCRIPTIONS;
  }

  private remember(event: RuntimeEvent): void {
    const history = this.history;
    if (history.length < this.maxHistory) {
      history.push(event);
      this.historyNext = history.length === this.maxHistory ? 0 : history.length;
      return;
    }
    history[this.historyNext] = event;
    this.historyNext = this.historyNext + 1 === this.maxHistory ? 0 : this.historyNext + 1;
  }

  private dispatch(subscriptions: readonly Subscription[], event: RuntimeEvent): void {
    for (let index = 0; index < subscriptions.length; index++) {
      const subscription = subscriptions[index] as Subscription;
      if (!subscription.active) continue;
      let result: void | Promise<void>;
      try {
        result = subscription.handler(event);
      } catch (error) {
        this.reportHandlerError(error, event);
        continue;
      }
      if (result != null && typeof (result as Promise<void>).then === "function") this.track(result, event);
    }
  }

  // Only asynchronous handlers get here; their promise already costs an allocation, so two callbacks are fine.
  private track(result: Promise<void>, event: RuntimeEvent): void {
    const tracked: Promise<void> = Promise.resolve(result).then(
      () => {
        this.pending.delete(tracked);
      },
      (error: unknown) => {
        this.pending.delete(tracked);
        this.reportHandlerError(error, event);
      },
    );
    this.pending.add(tracked);
  }

  private unsubscribe(name: string, subscription: Subscription): void {
    if (!subscription.active) return;
    subscription.active = false;
    if (name === "*") {
      this.wildcard = this.wildcard.filter((entry) => entry !== subscription);
      return;
    }
    const remaining = (this.byName.get(name) ?? NO_SUBSCRIPTIONS).filter((entry) => entry !== subscription);
    // Deleting empty lists keeps `publish` on its no-handler path.
    if (remaining.length === 0) this.byName.delete(name);
    else this.byName.set(name, remaining);
  }

  private warnMissing(event: RuntimeEvent): void {
    const missing = checkEventPayload(event.kind, event.payload);
    getLogger().warn(`event "${event.kind}" is missing required payload keys: ${missing.join(", ")}`, {
      event: event.kind,
      missing,
      runId: event.runId,
    });
  }

  private reportHandlerError(error: unknown, event: RuntimeEvent): void {
    getLogger().error(`event handler for "${event.kind}" failed; the error is ignored`, {
      event: event.kind,
      runId: event.runId,
      error,
    });
  }
}

function deactivate(subscriptions: readonly Subscription[]): void {
  for (const subscription of subscriptions) subscription.active = false;
}
