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

/**
 * A response that streams `chunks` as SSE frames and ends with `data: [DONE]`. Chunks are pulled as the client
 * reads, so a slow client never makes the server buffer more than a frame; a client that leaves stops the
 * iteration (`return()`), which detaches from the run without stopping it.
 */
export function uiMessageStreamResponse(
  chunks: AsyncIterable<UiMessageChunk>,
  init: { headers?: Record<string, string> } = {},
): Response {
  const iterator = chunks[Symbol.asyncIterator]();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
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
  return new Response(body, { status: 200, headers: { ...UI_MESSAGE_STREAM_HEADERS, ...init.headers } });
}
