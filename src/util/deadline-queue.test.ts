import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DeadlineQueue } from "./deadline-queue.js";

describe("DeadlineQueue", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("fires each deadline at its time, earliest first, whatever the order they were added", () => {
    const queue = new DeadlineQueue();
    const fired: string[] = [];
    queue.add(300, () => fired.push("c"));
    queue.add(100, () => fired.push("a"));
    queue.add(200, () => fired.push("b"));
    queue.add(100, () => fired.push("a2"));
    expect(queue.size).toBe(4);

    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired.sort()).toEqual(["a", "a2"]);
    expect(queue.size).toBe(2);
    vi.advanceTimersByTime(99);
    expect(fired).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(fired.slice(2)).toEqual(["b"]);
    vi.advanceTimersByTime(100);
    expect(fired.slice(2)).toEqual(["b", "c"]);
    expect(queue.size).toBe(0);
  });

  it("takes an absolute clock time with addAt, ordered with add's deadlines", () => {
    const queue = new DeadlineQueue();
    const fired: string[] = [];
    const now = Date.now();
    queue.add(200, () => fired.push("add"));
    queue.addAt(now + 100, () => fired.push("at"));
    queue.addAt(now + 150, () => fired.push("cancelled")).cancel();
    expect(queue.size).toBe(2);

    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["at"]);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(["at", "add"]);
    expect(queue.size).toBe(0);
  });

  it("fires a deadline once", () => {
    const queue = new DeadlineQueue();
    const fire = vi.fn();
    const deadline = queue.add(10, fire);
    vi.advanceTimersByTime(1000);
    deadline.cancel();
    vi.advanceTimersByTime(1000);
    expect(fire).toHaveBeenCalledTimes(1);
    expect(queue.size).toBe(0);
  });

  it("does not fire a cancelled deadline and keeps the others", () => {
    const queue = new DeadlineQueue();
    const fired: string[] = [];
    const first = queue.add(50, () => fired.push("first"));
    queue.add(60, () => fired.push("second"));
    first.cancel();
    first.cancel();
    expect(queue.size).toBe(1);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(["second"]);
    expect(queue.size).toBe(0);
  });

  it("holds many deadlines on one timer and re-arms only for an earlier one", () => {
    const setTimeoutSpy = vi.spyOn(globalThis, "setTimeout");
    const queue = new DeadlineQueue();
    const fired: number[] = [];
    queue.add(1000, () => fired.push(1000));
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
    for (let delay = 1001; delay < 1101; delay++) queue.add(delay, () => fired.push(delay));
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(1);
    queue.add(10, () => fired.push(10));
    expect(setTimeoutSpy).toHaveBeenCalledTimes(2);
    expect(vi.getTimerCount()).toBe(1);
    expect(queue.size).toBe(102);

    vi.advanceTimersByTime(10);
    expect(fired).toEqual([10]);
    vi.advanceTimersByTime(2000);
    expect(fired).toHaveLength(102);
    expect(fired.slice(1)).toEqual(Array.from({ length: 101 }, (_, index) => 1000 + index));
    expect(vi.getTimerCount()).toBe(0);
  });

  it("fires deadlines that are due together in one timer callback", () => {
    const setTimeoutSpy = vi.spyOn(globalThis, "setTimeout");
    const queue = new DeadlineQueue();
    const fired: number[] = [];
    for (let index = 0; index < 5; index++) queue.add(20, () => fired.push(index));
    vi.advanceTimersByTime(20);
    expect(fired.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
  });

  it("stays correct after compaction drops many cancelled entries", () => {
    const queue = new DeadlineQueue();
    const fired: number[] = [];
    const deadlines = Array.from({ length: 200 }, (_, index) =>
      queue.add(10 + index, () => fired.push(index)),
    );
    const kept = new Set([3, 77, 150, 199]);
    deadlines.forEach((deadline, index) => {
      if (!kept.has(index)) deadline.cancel();
    });
    expect(queue.size).toBe(4);
    // Compaction dropped most cancelled entries from the heap.
    expect((queue as unknown as { heap: unknown[] }).heap.length).toBeLessThan(100);
    // Cancelling an entry dropped by compaction is harmless.
    deadlines[0]!.cancel();
    expect(queue.size).toBe(4);
    queue.add(5, () => fired.push(-1));
    expect(queue.size).toBe(5);

    vi.advanceTimersByTime(500);
    expect(fired).toEqual([-1, 3, 77, 150, 199]);
    expect(queue.size).toBe(0);
  });

  it("keeps a correct size when cancelled entries are popped by the timer", () => {
    const queue = new DeadlineQueue();
    const fire = vi.fn();
    const cancelled = queue.add(10, () => fire("cancelled"));
    queue.add(20, () => fire("kept"));
    cancelled.cancel();
    vi.advanceTimersByTime(15);
    expect(queue.size).toBe(1);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(5);
    expect(fire).toHaveBeenCalledExactlyOnceWith("kept");
    expect(queue.size).toBe(0);
  });

  it("fires a deadline added from inside a firing callback", () => {
    const queue = new DeadlineQueue();
    const fired: string[] = [];
    queue.add(10, () => {
      fired.push("outer");
      queue.add(0, () => fired.push("inner"));
    });
    vi.advanceTimersByTime(10);
    expect(fired).toContain("outer");
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["outer", "inner"]);
  });
});
