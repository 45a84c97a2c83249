import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EventBus, RuntimeEvent } from "../contracts/runtime-event.js";
import { type Logger, setLogger } from "../logging/logger.js";

/** Options of {@link describeEventBusConformance}. */
export interface EventBusConformanceOptions {
  /** Called after each test, after `close()`, to remove what the bus wrote (log files). */
  cleanup?: (bus: EventBus) => Promise<void> | void;
}

/**
 * Register the vitest suite every `EventBus` must pass: delivery by name and to `"*"`, unsubscribe, `emit`
 * returning the event it built, handler errors (thrown or rejected) never reaching the emitter, history by name
 * and limit, `clearHistory`, `flush` and `close`. `factory` makes a fresh bus per test.
 *
 * @example
 * describeEventBusConformance("my_bus", () => new MyEventBus());
 */
export function describeEventBusConformance(
  name: string,
  factory: () => Promise<EventBus> | EventBus,
  options: EventBusConformanceOptions = {},
): void {
  describe(`EventBus conformance: ${name}`, () => {
    let bus: EventBus;

    beforeEach(async () => {
      bus = await factory();
    });

    afterEach(async () => {
      await bus.close();
      await options.cleanup?.(bus);
    });

    it("delivers an event to the handlers of its name, in subscription order, and not to other names", () => {
      const seen: string[] = [];
      bus.subscribe("probe.one", (event) => void seen.push(`first:${event.kind}`));
      bus.subscribe("probe.one", (event) => void seen.push(`second:${event.kind}`));
      bus.subscribe("probe.other", (event) => void seen.push(`other:${event.kind}`));
      bus.emit("probe.one", { value: 1 });
      expect(seen).toEqual(["first:probe.one", "second:probe.one"]);
    });

    it('delivers every event to "*" handlers', () => {
      const kinds: string[] = [];
      bus.subscribe("*", (event) => void kinds.push(event.kind));
      bus.emit("probe.one");
      bus.emit("probe.two", { value: 2 });
      expect(kinds).toEqual(["probe.one", "probe.two"]);
    });

    it("emit returns the RuntimeEvent it built, the same object handlers receive", () => {
      const received: RuntimeEvent[] = [];
      bus.subscribe("probe.one", (event) => void received.push(event));
      const event = bus.emit("probe.one", { value: 1 });
      expect(event).toBeInstanceOf(RuntimeEvent);
      expect(event.kind).toBe("probe.one");
      expect(event.name).toBe("probe.one");
      expect(event.payload).toEqual({ value: 1 });
      expect(Number.isFinite(event.timestampMs)).toBe(true);
      expect(received).toEqual([event]);
      expect(received[0]).toBe(event);
    });

    it("emit without a payload gives the event an empty one", () => {
      expect(bus.emit("probe.one").payload).toEqual({});
    });

    it("publish delivers an event built elsewhere as it is, run identity and sequence included", () => {
      const received: RuntimeEvent[] = [];
      bus.subscribe("*", (event) => void received.push(event));
      const event = new RuntimeEvent("probe.run", { step: 3 }, 1_000, "run-1", "session-1", "agent-1", 7);
      bus.publish(event);
      expect(received).toEqual([event]);
      expect(bus.getHistory({ name: "probe.run" })).toEqual([event]);
    });

    it("stops delivering to a handler once unsubscribed; unsubscribing twice is harmless", () => {
      const seen: string[] = [];
      const unsubscribe = bus.subscribe("probe.one", (event) => void seen.push(event.kind));
      const unsubscribeAll = bus.subscribe("*", (event) => void seen.push(`*:${event.kind}`));
      bus.emit("probe.one");
      unsubscribe();
      unsubscribeAll();
      unsubscribe();
      bus.emit("probe.one");
      expect(seen).toEqual(["probe.one", "*:probe.one"]);
    });

    it("an unsubscribe during delivery leaves the other handlers subscribed", () => {
      const seen: string[] = [];
      const unsubscribe = bus.subscribe("probe.one", () => {
        seen.push("once");
        unsubscribe();
      });
      bus.subscribe("probe.one", () => void seen.push("always"));
      bus.emit("probe.one");
      bus.emit("probe.one");
      expect(seen).toEqual(["once", "always", "always"]);
    });

    describe("with handlers that fail", () => {
      let previous: Logger;
      beforeEach(() => {
        // The bus may report the failures through Keel's logger; they are expected here, so keep them quiet.
        const ignore = (): void => {};
        previous = setLogger({ debug: ignore, info: ignore, warn: ignore, error: ignore });
      });
      afterEach(() => {
        setLogger(previous);
      });

      it("a throwing or rejecting handler neither breaks emit nor stops the other handlers", async () => {
        const seen: string[] = [];
        bus.subscribe("probe.one", () => {
          throw new Error("handler failed");
        });
        bus.subscribe("probe.one", async () => {
          throw new Error("async handler failed");
        });
        bus.subscribe("probe.one", () => void seen.push("named"));
        bus.subscribe("*", () => void seen.push("wildcard"));
        expect(() => bus.emit("probe.one")).not.toThrow();
        await expect(bus.flush()).resolves.toBeUndefined();
        expect(seen).toEqual(["named", "wildcard"]);
        expect(bus.getHistory({ name: "probe.one" })).toHaveLength(1);
      });
    });

    it("flush waits for asynchronous handlers", async () => {
      const done: string[] = [];
      bus.subscribe("probe.one", async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        done.push("slow");
      });
      bus.emit("probe.one");
      await bus.flush();
      expect(done).toEqual(["slow"]);
    });

    it("keeps the history oldest first, filtered by name and cut to the newest `limit`", () => {
      const a1 = bus.emit("probe.a", { n: 1 });
      const b1 = bus.emit("probe.b", { n: 2 });
      const a2 = bus.emit("probe.a", { n: 3 });
      const a3 = bus.emit("probe.a", { n: 4 });
      expect(bus.getHistory()).toEqual([a1, b1, a2, a3]);
      expect(bus.getHistory({ name: "probe.a" })).toEqual([a1, a2, a3]);
      expect(bus.getHistory({ limit: 2 })).toEqual([a2, a3]);
      expect(bus.getHistory({ name: "probe.a", limit: 2 })).toEqual([a2, a3]);
      expect(bus.getHistory({ name: "probe.b", limit: 5 })).toEqual([b1]);
      expect(bus.getHistory({ name: "probe.none" })).toEqual([]);
      expect(bus.getHistory({ limit: 0 })).toEqual([]);
    });

    it("getHistory returns a copy: changing it does not change the bus's history", () => {
      bus.emit("probe.one");
      bus.getHistory().length = 0;
      expect(bus.getHistory()).toHaveLength(1);
    });

    it("clearHistory forgets recorded events but keeps subscriptions", () => {
      const seen: string[] = [];
      bus.subscribe("probe.one", (event) => void seen.push(event.kind));
      bus.emit("probe.one");
      bus.clearHistory();
      expect(bus.getHistory()).toEqual([]);
      const after = bus.emit("probe.one");
      expect(bus.getHistory()).toEqual([after]);
      expect(seen).toEqual(["probe.one", "probe.one"]);
    });

    it("close waits for running handlers and then delivers to nobody", async () => {
      const seen: string[] = [];
      bus.subscribe("probe.one", async (event) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen.push(event.kind);
      });
      bus.subscribe("*", () => void seen.push("wildcard"));
      bus.emit("probe.one");
      await bus.close();
      expect(seen).toEqual(["wildcard", "probe.one"]);
      bus.emit("probe.one");
      expect(seen).toEqual(["wildcard", "probe.one"]);
    });
  });
}
