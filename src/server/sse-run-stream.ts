import { errorResponseOf } from "./server-error.js";

/** A chunk as the SSE stream writes it: `id:` is its sequence, `event:` its kind, `data:` its JSON. */
export interface SseChunk {
  kind: string;
  sequence: number;
}

export interface SseStreamOptions {
  /** A comment frame (`: ping`) after this long without an event, so proxies keep an idle stream open. */
  heartbeatMs: number;
  /** Frames a connection may hold unread before its client counts as stalled. */
  maxQueuedFrames: number;
  /** How long a stalled client may read nothing before it is cut off (it re-attaches from its last id). */
  stallTimeoutMs: number;
  /** What the client sees of a chunk (the server hides its tenancy in session ids). */
  present?: (chunk: SseChunk) => unknown;
  /**
   * Names the presentation: streams with the same key present a chunk alike, so its encoded frame is made once
   * and shared. Without one every stream encodes its own.
   */
  presentKey?: string;
}

const encoder = new TextEncoder();
const PING = encoder.encode(": ping\n\n");

/**
 * Each chunk's encoded frame, by the presentation it was made for. Every client of a run reads the same chunk
 * objects, so a thousand clients of one run serialise and encode each event once, not a thousand times.
 */
const FRAMES = new WeakMap<object, { key: string; bytes: Uint8Array }>();

/**
 * A run's chunks as a `text/event-stream` body. The body is pulled: a chunk is read from the run only when the
 * connection has room, so a slow client holds at most `maxQueuedFrames` frames here and never the run back (the
 * run's log is bounded and the store keeps what memory lets go). A client that reads nothing while frames wait
 * is cut off after `stallTimeoutMs`: the frames already queued still reach it, then the stream ends, and it
 * re-attaches from the last id it saw. A client that leaves only detaches; the run goes on. One timer per stream
 * writes the heartbeat when a whole period passed without a frame, so an event costs no timer of its own.
 */
export function sseRunStream(
  chunks: AsyncIterator<SseChunk>,
  options: SseStreamOptions,
): ReadableStream<Uint8Array> {
  let stallTimer: ReturnType<typeof setTimeout> | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let idle = true;
  let ended = false;
  const present = options.present ?? ((chunk: SseChunk) => chunk);
  const frameOf = (chunk: SseChunk): Uint8Array => {
    const key = options.presentKey;
    if (key === undefined) return encoder.encode(frame(chunk.kind, chunk.sequence, present(chunk)));
    const cached = FRAMES.get(chunk);
    if (cached !== undefined && cached.key === key) return cached.bytes;
    const bytes = encoder.encode(frame(chunk.kind, chunk.sequence, present(chunk)));
    FRAMES.set(chunk, { key, bytes });
    return bytes;
  };

  const finish = () => {
    if (ended) return;
    ended = true;
    clearTimeout(stallTimer);
    clearInterval(heartbeat);
    chunks.return?.()?.catch(() => {});
  };

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        heartbeat = setInterval(() => {
          if (ended) return;
          if (idle) controller.enqueue(PING);
          idle = true;
        }, options.heartbeatMs);
      },
      async pull(controller) {
        clearTimeout(stallTimer);
        if (ended) return;
        let next: IteratorResult<SseChunk>;
        try {
          next = await chunks.next();
        } catch (error) {
          // The stream cannot go on (events the store no longer has, a run the store does not know): say why in
          // the same JSON shape every other error has, then end.
          if (!ended) {
            controller.enqueue(encoder.encode(frame("error", undefined, errorResponseOf(error).body)));
            controller.close();
          }
          finish();
          return;
        }
        if (ended) return;
        if (next.done) {
          controller.close();
          finish();
          return;
        }
        idle = false;
        controller.enqueue(frameOf(next.value));
        // The queue is full and the client reads nothing: give it until the stall timeout, then cut it off.
        if ((controller.desiredSize ?? 1) <= 0) {
          stallTimer = setTimeout(() => {
            if (ended) return;
            controller.close();
            finish();
          }, options.stallTimeoutMs);
        }
      },
      cancel() {
        finish();
      },
    },
    new CountQueuingStrategy({ highWaterMark: Math.max(1, options.maxQueuedFrames) }),
  );
}

function frame(event: string, id: number | undefined, data: unknown): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};
