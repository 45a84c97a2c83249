/**
 * Many deadlines on one timer. A run waiting on a tool needs a timeout, and ten thousand parked runs would
 * otherwise hold ten thousand Node timers; a binary heap and a single re-armed timer cost a few words each.
 * The timer does not keep the process alive — a timeout guards work that does — unless a deadline asks to
 * (`keepAlive`): a wait that is itself the work, like a durable run waiting out a rate limit before it resumes.
 */
export interface Deadline {
  /** Forget the deadline; it will not fire. */
  cancel(): void;
}

class Entry implements Deadline {
  readonly at: number;
  /** Null once the deadline fired or was cancelled. */
  fire: (() => void) | null;
  keepAlive = false;
  constructor(
    private readonly queue: DeadlineQueue,
    at: number,
    fire: () => void,
  ) {
    this.at = at;
    this.fire = fire;
  }
  cancel(): void {
    if (this.fire === null) return;
    this.fire = null;
    if (this.keepAlive) this.queue.noteKeepAliveDone();
    this.queue.noteCancelled();
  }
}

export class DeadlineQueue {
  private readonly heap: Entry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private armedAt = Number.POSITIVE_INFINITY;
  private cancelledCount = 0;
  /** Pending deadlines that keep the process alive; the timer is ref'd only while there are some. */
  private keepAliveCount = 0;

  /**
   * Call `fire` after `delayMs` unless cancelled first. With `keepAlive` the process does not exit before the
   * deadline fires or is cancelled.
   */
  add(delayMs: number, fire: () => void, options?: { keepAlive?: boolean }): Deadline {
    return this.addAt(Date.now() + delayMs, fire, options?.keepAlive === true);
  }

  /**
   * Call `fire` at `at` (a `Date.now()` time) unless cancelled first: for a caller that has just read the clock
   * (a run's step deadline starts at its `step.started` event's time), so it is not read twice.
   */
  addAt(at: number, fire: () => void, keepAlive = false): Deadline {
    // Made at its final shape, without an options object: a run makes one per step and per tool call.
    const entry = new Entry(this, at, fire);
    entry.keepAlive = keepAlive;
    this.push(entry);
    if (keepAlive && this.keepAliveCount++ === 0) this.timer?.ref();
    if (entry.at < this.armedAt) this.arm(entry.at);
    return entry;
  }

  /** @internal */
  noteKeepAliveDone(): void {
    if (--this.keepAliveCount === 0) this.timer?.unref();
  }

  /** @internal */
  noteCancelled(): void {
    this.cancelledCount++;
    if (this.cancelledCount > 64 && this.cancelledCount > this.heap.length / 2) this.compact();
  }

  get size(): number {
    return this.heap.length - this.cancelledCount;
  }

  private arm(at: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.armedAt = at;
    this.timer = setTimeout(() => this.run(), Math.max(0, at - Date.now()));
    if (this.keepAliveCount === 0) this.timer.unref();
  }

  private run(): void {
    this.timer = null;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    while (this.heap.length > 0 && this.heap[0]!.at <= now) {
      const entry = this.pop()!;
      const fire = entry.fire;
      if (fire === null) {
        this.cancelledCount--;
        continue;
      }
      entry.fire = null;
      if (entry.keepAlive) this.noteKeepAliveDone();
      fire();
    }
    const next = this.heap[0];
    if (next) this.arm(next.at);
  }

  /** Drop cancelled entries so a long-lived queue of mostly finished calls does not hold memory. */
  private compact(): void {
    const live = this.heap.filter((entry) => entry.fire !== null);
    this.heap.length = 0;
    this.cancelledCount = 0;
    for (const entry of live) this.push(entry);
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]!.at <= entry.at) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = entry;
  }

  private pop(): Entry | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    let index = 0;
    const length = heap.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && heap[right]!.at < heap[left]!.at ? right : left;
      if (heap[child]!.at >= last.at) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
    return top;
  }
}

/** The process-wide queue Keel's executors and the run loop share. */
export const deadlines = new DeadlineQueue();
