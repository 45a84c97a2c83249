import { describe, expect, it } from "vitest";
import { NodeQueue, type QueueNode } from "./node-queue.js";

interface Item extends QueueNode<Item> {
  name: string;
}

const item = (name: string): Item => ({ name, prev: null, next: null, queued: false });

function names(queue: NodeQueue<Item>): string[] {
  const seen: string[] = [];
  for (let node = queue.first; node !== null; node = node.next) seen.push(node.name);
  return seen;
}

describe("NodeQueue", () => {
  it("keeps push order and gives the oldest first", () => {
    const queue = new NodeQueue<Item>();
    expect(queue.first).toBeNull();
    const [a, b, c] = [item("a"), item("b"), item("c")];
    queue.push(a);
    queue.push(b);
    queue.push(c);
    expect(names(queue)).toEqual(["a", "b", "c"]);
    expect(queue.first).toBe(a);
  });

  it("moves a node pushed again to the end, once", () => {
    const queue = new NodeQueue<Item>();
    const [a, b, c] = [item("a"), item("b"), item("c")];
    for (const node of [a, b, c]) queue.push(node);
    queue.push(a);
    expect(names(queue)).toEqual(["b", "c", "a"]);
    queue.push(a);
    expect(names(queue)).toEqual(["b", "c", "a"]);
  });

  it("removes from the head, the middle and the tail, and ignores a node not in it", () => {
    const queue = new NodeQueue<Item>();
    const [a, b, c, d] = [item("a"), item("b"), item("c"), item("d")];
    for (const node of [a, b, c]) queue.push(node);
    queue.remove(b);
    expect(names(queue)).toEqual(["a", "c"]);
    queue.remove(a);
    expect(names(queue)).toEqual(["c"]);
    queue.remove(d);
    queue.remove(b);
    expect(names(queue)).toEqual(["c"]);
    queue.remove(c);
    expect(queue.first).toBeNull();
    expect([a.queued, b.queued, c.queued]).toEqual([false, false, false]);
    queue.push(b);
    queue.push(d);
    expect(names(queue)).toEqual(["b", "d"]);
    expect(b.prev).toBeNull();
    expect(d.next).toBeNull();
  });

  it("forgets its nodes without touching them", () => {
    const queue = new NodeQueue<Item>();
    const [a, b, c] = [item("a"), item("b"), item("c")];
    queue.push(a);
    queue.push(b);
    queue.forget();
    expect(queue.first).toBeNull();
    expect([a.queued, a.next]).toEqual([true, b]);
    queue.push(c);
    expect(names(queue)).toEqual(["c"]);
  });
});
