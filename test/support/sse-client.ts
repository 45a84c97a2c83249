import { createParser } from "eventsource-parser";

export interface SseEvent {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

export interface SseRead {
  events: SseEvent[];
  comments: string[];
  /** True when the stream ended by itself (not because `until` stopped reading). */
  ended: boolean;
}

/** Read an SSE response with eventsource-parser until it ends or `until` says stop (then the body is cancelled). */
export async function readSse(
  response: Response,
  until: (read: SseRead) => boolean = () => false,
): Promise<SseRead> {
  const read: SseRead = { events: [], comments: [], ended: false };
  const parser = createParser({
    onEvent: (event) => read.events.push({ id: event.id, event: event.event, data: event.data }),
    onComment: (comment) => read.comments.push(comment),
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      read.ended = true;
      return read;
    }
    parser.feed(decoder.decode(value, { stream: true }));
    if (until(read)) {
      await reader.cancel();
      return read;
    }
  }
}

/** The sequences (`id:`) of the events read. */
export const idsOf = (read: SseRead) => read.events.map((event) => Number(event.id));
