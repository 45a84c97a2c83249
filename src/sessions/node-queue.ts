/** What an object needs to be kept in a {@link NodeQueue}: its neighbours there, and whether it is in it. */
export interface QueueNode<N> {
  prev: N | null;
  next: N | null;
  queued: boolean;
}

/**
 * Objects in the order they were pushed, each at most once, threaded through their own `prev`/`next` fields. The
 * in-memory store keeps its retention orders (oldest finished run, idlest session) this way rather than in a
 * `Map` keyed by id: the object is at hand where a run or session changes, so joining, leaving and finding the
 * oldest are a few field writes, with no hashing and no iterator made to read the first key.
 */
export class NodeQueue<N extends QueueNode<N>> {
  private head: N | null = null;
  private tail: N | null = null;

  /** The node pushed longest ago, or null when empty. */
  get first(): N | null {
    return this.head;
  }

  /** Put `node` last, taking it out first if it is in already. */
  push(node: N): void {
    if (node.queued) this.remove(node);
    node.queued = true;
    node.prev = this.tail;
    node.next = null;
    if (this.tail === null) this.head = node;
    else this.tail.next = node;
    this.tail = node;
  }

  /** Take `node` out; nothing when it is not in. */
  remove(node: N): void {
    if (!node.queued) return;
    const { prev, next } = node;
    if (prev === null) this.head = next;
    else prev.next = next;
    if (next === null) this.tail = prev;
    else next.prev = prev;
    node.prev = null;
    node.next = null;
    node.queued = false;
  }

  /**
   * Empty the queue without touching its nodes, which keep their stale links: only for nodes that will never be
   * pushed or removed again (a store dropping everything at close, where walking thousands of nodes would cost more
   * than the rest of it).
   */
  forget(): void {
    this.head = null;
    this.tail = null;
  }
}
