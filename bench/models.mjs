/**
 * Free models for the benchmarks: `keel.model.v1` objects whose streams are pre-built arrays of parts, so
 * that what is measured is the loop around the model, not the model. The same objects serve Keel and the
 * hand-written loop.
 */

export const MODEL_SPECIFICATION_VERSION = "keel.model.v1";

const USAGE = Object.freeze({ type: "usage", usage: Object.freeze({ inputTokens: 10, outputTokens: 5 }) });

/**
 * An async iterable over a fixed array of parts. Each `next()` is an already-resolved promise: cheaper than an
 * async generator, and still asynchronous the way a provider's stream is.
 */
export class PartsStream {
  constructor(parts) {
    this.parts = parts;
    this.index = 0;
  }
  [Symbol.asyncIterator]() {
    return this;
  }
  next() {
    const parts = this.parts;
    if (this.index < parts.length) return Promise.resolve({ value: parts[this.index++], done: false });
    return Promise.resolve({ value: undefined, done: true });
  }
  return() {
    this.index = this.parts.length;
    return Promise.resolve({ value: undefined, done: true });
  }
}

/** The tool-call id of step `index`; the model reads the index back from the last tool message. */
export const toolCallId = (index) => `call_${index}`;
const toolCallIndex = (id) => Number(id.slice(5));

/**
 * S1/S3/S5: asks for `toolName({a, b})` `toolSteps` times, then answers "done". It decides from the request
 * alone — the last message's tool-call id says how many tool steps are behind it — so it serves any number of
 * concurrent runs, and its cost is O(1) whatever the transcript's length (S5 measures the loop, not the mock).
 */
export function createToolLoopModel({ toolSteps = 10, toolName = "add", modelId = "bench-tool-loop" } = {}) {
  const toolFinish = Object.freeze({ type: "finish", stopReason: "tool_use", model: modelId });
  const finalParts = Object.freeze([
    Object.freeze({ type: "text-delta", text: "done" }),
    USAGE,
    Object.freeze({ type: "finish", stopReason: "end_turn", model: modelId }),
  ]);
  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    provider: "bench",
    modelId,
    stream(request) {
      const messages = request.messages;
      const last = messages[messages.length - 1];
      const done = last !== undefined && last.role === "tool" ? toolCallIndex(last.toolCallId) + 1 : 0;
      if (done >= toolSteps) return new PartsStream(finalParts);
      return new PartsStream([
        { type: "tool-call", id: toolCallId(done), name: toolName, arguments: { a: done, b: 1 } },
        USAGE,
        toolFinish,
      ]);
    },
  };
}

/** S2: one model call streaming `deltas` text deltas, then usage and finish. The parts are built once. */
export function createDeltaModel({ deltas = 1000, modelId = "bench-deltas" } = {}) {
  const parts = [];
  for (let index = 0; index < deltas; index++)
    parts.push(Object.freeze({ type: "text-delta", text: `w${index % 10} ` }));
  parts.push(USAGE, Object.freeze({ type: "finish", stopReason: "end_turn", model: modelId }));
  Object.freeze(parts);
  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    provider: "bench",
    modelId,
    stream() {
      return new PartsStream(parts);
    },
  };
}
