import { describeMemoryConformance } from "../testing/memory-conformance.js";
import { BufferMemory } from "./buffer-memory.js";
import { ChainMemory } from "./chain-memory.js";
import { type Mem0Client, Mem0Memory } from "./mem0-memory.js";
import { WindowBufferMemory } from "./window-buffer-memory.js";

/** A mem0 stand-in: `add` keeps the messages per user id, `search` finds those containing the query's words. */
function inMemoryMem0(): Mem0Client {
  const stored: { userId: unknown; memory: string }[] = [];
  return {
    add: async (messages, options) => {
      for (const message of messages) stored.push({ userId: options.user_id, memory: message.content });
      return [];
    },
    search: async (query, options) => {
      const words = query.toLowerCase().split(/\W+/).filter(Boolean);
      const found = stored.filter(
        (entry) =>
          entry.userId === options.user_id && words.some((word) => entry.memory.toLowerCase().includes(word)),
      );
      return { results: found.slice(0, Number(options.limit)).map((entry) => ({ memory: entry.memory })) };
    },
  };
}

describeMemoryConformance("buffer", () => new BufferMemory());
describeMemoryConformance("window_buffer", () => new WindowBufferMemory({ windowSize: 3 }));
describeMemoryConformance(
  "chain",
  () =>
    new ChainMemory([
      new BufferMemory(),
      new WindowBufferMemory({ stateKey: "recent_runs", viewKey: "recent", windowSize: 2 }),
    ]),
);
// mem0 keeps memories under one user id for every session, so it does not isolate sessions.
describeMemoryConformance("mem0", () => new Mem0Memory({ client: inMemoryMem0() }), {
  isolatesSessions: false,
});
