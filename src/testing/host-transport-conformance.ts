import { afterEach, describe, expect, it } from "vitest";
import { ActionChannel, type ChannelProblem } from "../host/transport/action-channel.js";
import {
  ActionCallError,
  ActionCallTimeoutError,
  ChannelBusyError,
  ChannelClosedError,
  MessageTooLargeError,
} from "../host/transport/channel-errors.js";
import type { MessageTransport, TransportLimits } from "../host/transport/transport.js";

/** Two connected ends of a transport, and a way to lose the connection as a crash or network failure would. */
export interface ConnectedTransports {
  a: MessageTransport;
  b: MessageTransport;
  /** Breaks the connection abruptly (kill, reset), not a polite close. */
  lose(): void | Promise<void>;
  /** Frees what the pair holds (servers, sockets); called after each test. */
  dispose?(): void | Promise<void>;
}

export type ConnectTransports = (options: {
  limits?: Partial<TransportLimits>;
}) => Promise<ConnectedTransports>;

interface Ends {
  a: ActionChannel;
  b: ActionChannel;
  pair: ConnectedTransports;
  problems: ChannelProblem[];
}

const never = () => new Promise<Record<string, unknown>>(() => {});

/**
 * Register the vitest suite every host transport must pass, run through the action channel: calls both ways at
 * once, a single call's timeout, streamed calls with their idle timeout, messages around the framing sizes, the
 * message limits, and a lost connection failing every call in flight at once.
 *
 * @example
 * describeHostTransportConformance("in-memory", async () => {
 *   const [a, b] = createInMemoryTransportPair();
 *   return { a, b, lose: () => a.close() };
 * });
 */
export function describeHostTransportConformance(name: string, connect: ConnectTransports): void {
  describe(`host transport conformance: ${name}`, () => {
    const opened: Ends[] = [];

    async function open(
      options: { limits?: Partial<TransportLimits>; maxInFlight?: number } = {},
    ): Promise<Ends> {
      const pair = await connect({ ...(options.limits ? { limits: options.limits } : {}) });
      const problems: ChannelProblem[] = [];
      const channelOptions = {
        onProblem: (problem: ChannelProblem) => void problems.push(problem),
        ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
      };
      const ends = {
        a: new ActionChannel({ transport: pair.a, onProblem: channelOptions.onProblem }),
        b: new ActionChannel({ transport: pair.b, ...channelOptions }),
        pair,
        problems,
      };
      opened.push(ends);
      return ends;
    }

    afterEach(async () => {
      for (const ends of opened.splice(0)) {
        await ends.a.close();
        await ends.b.close();
        await ends.pair.dispose?.();
      }
    });

    it("serves calls in both directions at once and matches every answer to its call", async () => {
      const { a, b } = await open();
      const echo = async (data: Record<string, unknown>) => {
        // Later calls answer first, so answers cross on the wire.
        await new Promise((resolve) => setTimeout(resolve, 20 - Number(data.index)));
        return { echoed: data.index };
      };
      a.handle("echo", echo);
      b.handle("echo", echo);
      const indexes = Array.from({ length: 20 }, (_, index) => index);
      const [fromA, fromB] = await Promise.all([
        Promise.all(indexes.map((index) => a.call("echo", { index }))),
        Promise.all(indexes.map((index) => b.call("echo", { index }))),
      ]);
      expect(fromA.map((answer) => answer.echoed)).toEqual(indexes);
      expect(fromB.map((answer) => answer.echoed)).toEqual(indexes);
    });

    it("fails a single call that gets no answer within its timeout, and the channel stays usable", async () => {
      const { a, b } = await open();
      b.handle("hang", never);
      b.handle("ping", async () => ({ pong: true }));
      await expect(a.call("hang", {}, { timeoutMs: 30 })).rejects.toBeInstanceOf(ActionCallTimeoutError);
      await expect(a.call("ping", {})).resolves.toEqual({ pong: true });
    });

    it("streams continue chunks in order and ends on the end chunk", async () => {
      const { a, b } = await open();
      b.handle("count", async function* (data) {
        for (let index = 0; index < Number(data.to); index++) yield { index };
      });
      const seen: unknown[] = [];
      for await (const chunk of a.stream("count", { to: 5 })) seen.push(chunk.index);
      expect(seen).toEqual([0, 1, 2, 3, 4]);
    });

    it("applies the timeout between chunks of a stream", async () => {
      const { a, b } = await open();
      b.handle("stall", async function* () {
        yield { first: true };
        await never();
      });
      const seen: unknown[] = [];
      const reading = (async () => {
        for await (const chunk of a.stream("stall", {}, { timeoutMs: 40 })) seen.push(chunk);
      })();
      await expect(reading).rejects.toBeInstanceOf(ActionCallTimeoutError);
      expect(seen).toEqual([{ first: true }]);
    });

    it("lets a consumer stop reading a stream early without a problem reported", async () => {
      const { a, b, problems } = await open();
      b.handle("many", async function* () {
        for (let index = 0; index < 50; index++) yield { index };
      });
      for await (const chunk of a.stream("many", {})) if (chunk.index === 2) break;
      await expect(a.call("__ping", {})).resolves.toEqual({});
      expect(problems).toEqual([]);
    });

    it("carries an error answer and an unknown action as call errors", async () => {
      const { a, b } = await open();
      b.handle("fail", async () => {
        throw new TypeError("bad input");
      });
      const failed = await a.call("fail", {}).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(ActionCallError);
      expect((failed as ActionCallError).message).toContain("TypeError: bad input");
      const unknown = await a.call("no.such.action", {}).catch((error: unknown) => error);
      expect((unknown as ActionCallError).apiError?.apiCode).toBe("not_found");
    });

    it("round-trips messages of every size around the framing thresholds, multi-byte text included", async () => {
      const { a, b } = await open();
      b.handle("echo", async (data) => data);
      for (const size of [
        16 * 1024 - 1,
        16 * 1024,
        16 * 1024 + 1,
        64 * 1024 - 1,
        64 * 1024,
        64 * 1024 + 1,
        1024 * 1024,
      ]) {
        for (const text of ["x".repeat(size), "\u00e9\u6f22\u{1f600}".repeat(Math.ceil(size / 9))]) {
          const answer = await a.call("echo", { text });
          expect(answer.text === text, `size ${size}`).toBe(true);
        }
      }
    });

    it("refuses to send a message over the size limit, and the channel stays usable", async () => {
      const { a, b } = await open({ limits: { maxMessageBytes: 200 * 1024 } });
      b.handle("echo", async (data) => data);
      await expect(a.call("echo", { text: "x".repeat(300 * 1024) })).rejects.toBeInstanceOf(
        MessageTooLargeError,
      );
      await expect(a.call("echo", { text: "small" })).resolves.toEqual({ text: "small" });
    });

    it("answers a request beyond the in-flight limit with rate_limited, and refuses its own beyond it", async () => {
      const { a, b, problems } = await open({ maxInFlight: 2 });
      b.handle("hang", never);
      a.handle("hang", never);
      void a.call("hang", {}).catch(() => {});
      void a.call("hang", {}).catch(() => {});
      const refused = await a.call("hang", {}).catch((error: unknown) => error);
      expect((refused as ActionCallError).apiError?.apiCode).toBe("rate_limited");
      expect(problems.map((problem) => problem.kind)).toContain("too_many_in_flight");
      void b.call("hang", {}).catch(() => {});
      void b.call("hang", {}).catch(() => {});
      await expect(b.call("hang", {})).rejects.toBeInstanceOf(ChannelBusyError);
    });

    it("fails every call in flight at once when the connection is lost, and aborts the handlers", async () => {
      const { a, b, pair } = await open();
      let handlerSignal: AbortSignal | undefined;
      b.handle("hang", (_data, context) => {
        handlerSignal = context.signal;
        return never();
      });
      b.handle("hangStream", async function* () {
        yield { started: true };
        await never();
      });
      const single = a.call("hang", {}, { timeoutMs: 600_000 });
      const streamed = (async () => {
        for await (const _chunk of a.stream("hangStream", {}, { timeoutMs: 600_000 })) {
          // reads until the loss
        }
      })();
      await expect.poll(() => handlerSignal !== undefined).toBe(true);
      await pair.lose();
      await expect(single).rejects.toBeInstanceOf(ChannelClosedError);
      await expect(streamed).rejects.toBeInstanceOf(ChannelClosedError);
      await expect.poll(() => handlerSignal?.aborted).toBe(true);
      expect(a.closed).toBe(true);
      await expect(a.call("hang", {})).rejects.toBeInstanceOf(ChannelClosedError);
    });
  });
}
