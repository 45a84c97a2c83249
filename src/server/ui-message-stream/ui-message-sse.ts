import type { UiMessageChunk } from "./ui-message-chunk.js";

/**
 * The headers of a UI message stream. The protocol header tells an AI SDK client (and proxies that know it) what
 * the body is; `x-accel-buffering: no` keeps nginx from holding the stream back.
 */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
});

const encoder = new TextEncoder();
const DONE_FRAME = encoder.encode("data: [DONE]\n\n");

/** One chunk as the SSE frame the client's parser reads: only `data:`, JSON on one line. */
export function uiMessageFrame(chunk: UiMessageChunk): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** A comment frame: the client's parser skips it; proxies see bytes and keep an idle stream open. */
const KEEP_ALIVE_FRAME = encoder.encode(": keep-alive\n\n");

export interface UiMessageStreamResponseOptions {
  headers?: Record<string, string>;
  /** While no chunk comes for this long (a slow tool, a long model call), send a comment frame; 0 sends none. */
  keepAliveMs?: number;
}

/**
 * A response that streams `chunks` as SSE frames and ends with `data: [DONE]`. Chunks are pulled as the client
 * reads, so a slow client never makes the server buffer more than a frame (keep-alive frames are sent only into
 * an empty queue); a client that leaves stops the iteration (`return()`), which detaches from the run without
 * stopping it.
 */
export function uiMessageStreamResponse(
  chunks: AsyncIterable<UiMessageChunk>,
  options: UiMessageStreamResponseOptions = {},
): Response {
  const iterator = chunks[Symbol.asyncIterator]();
  const keepAliveMs = options.keepAliveMs ?? 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const pending = iterator.next();
      const timer =
        keepAliveMs > 0
          ? setInterval(() => {
              if ((controller.desiredSize ?? 0) > 0) controller.enqueue(KEEP_ALIVE_FRAME);
            }, keepAliveMs)
          : undefined;
      let next: IteratorResult<UiMessageChunk>;
      try {
        next = await pending;
      } finally {
        clearInterval(timer);
      }
      if (next.done === true) {
        controller.enqueue(DONE_FRAME);
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(uiMessageFrame(next.value)));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  return new Response(body, { status: 200, headers: { ...UI_MESSAGE_STREAM_HEADERS, ...options.headers } });
}
