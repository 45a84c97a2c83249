import { afterEach, describe, expect, it, vi } from "vitest";
import { ActionChannel } from "./action-channel.js";
import { ActionCallTimeoutError } from "./channel-errors.js";
import { createInMemoryTransportPair } from "./in-memory-transport.js";

// The stream's idle timeout is one timer for the whole stream that re-arms itself for the time left when a chunk
// came since it was set. These tests drive the clock by hand: chunks that keep coming within the timeout keep the
// stream open however long it lasts, and the timeout still fires exactly one timeout after the last chunk.
describe("ActionChannel stream idle timeout", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Two channels over an in-memory pair; `b` serves `drip`, one chunk each time `release()` is called. */
  function dripping() {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const [left, right] = createInMemoryTransportPair();
    const a = new ActionChannel({ transport: left });
    const b = new ActionChannel({ transport: right });
    const releases: (() => void)[] = [];
    b.handle("drip", async function* (data) {
      for (let index = 0; index < Number(data.count); index++) {
        await new Promise<void>((resolve) => releases.push(resolve));
        yield { index };
      }
      // Stays open after its chunks: only the consumer's timeout ends the stream.
      await new Promise(() => {});
    });
    const release = () => releases.shift()?.();
    return { a, b, release, waiting: () => releases.length };
  }

  /** Lets the in-memory transport (setImmediate, not faked) and the promise chains behind it run. */
  const settle = async () => {
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  };

  it("keeps a stream open past its timeout while each chunk comes within it, then times out after the last", async () => {
    const { a, b, release, waiting } = dripping();
    const seen: unknown[] = [];
    let failure: unknown;
    const reading = (async () => {
      for await (const chunk of a.stream("drip", { count: 5 }, { timeoutMs: 100 })) seen.push(chunk.index);
    })().catch((error: unknown) => {
      failure = error;
    });
    await settle();
    for (let index = 0; index < 5; index++) {
      expect(waiting()).toBe(1);
      // 60 ms between chunks: 300 ms in all, three times the timeout, and no gap as long as it.
      vi.advanceTimersByTime(60);
      release();
      await settle();
    }
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    vi.advanceTimersByTime(99);
    await settle();
    expect(failure).toBeUndefined();
    vi.advanceTimersByTime(1);
    await settle();
    await reading;
    expect(failure).toBeInstanceOf(ActionCallTimeoutError);
    await a.close();
    await b.close();
  });

  it("hands a chunk to a reader already waiting and ends the stream at its end chunk", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const [left, right] = createInMemoryTransportPair();
    const a = new ActionChannel({ transport: left });
    const b = new ActionChannel({ transport: right });
    let release: (() => void) | undefined;
    b.handle("two", async function* () {
      yield { index: 0 };
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      yield { index: 1 };
    });
    const iterator = a.stream("two", {})[Symbol.asyncIterator]();
    await expect(iterator.next()).resolves.toEqual({ done: false, value: { index: 0 } });
    // Asked before the chunk exists: the read waits, and the chunk goes straight to it.
    const next = iterator.next();
    await settle();
    release?.();
    await expect(next).resolves.toEqual({ done: false, value: { index: 1 } });
    await expect(iterator.next()).resolves.toEqual({ done: true, value: undefined });
    await expect(iterator.next()).resolves.toEqual({ done: true, value: undefined });
    await a.close();
    await b.close();
  });
});
