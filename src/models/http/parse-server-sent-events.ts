import { createParser, type EventSourceMessage } from "eventsource-parser";

/** One server-sent event: its `event:` name ("message" when none was given), its joined `data:` lines. */
export interface ServerSentEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * Read server-sent events from a byte stream with `eventsource-parser` (the parser the AI SDK uses): bytes are
 * decoded as a stream, so a chunk may end anywhere, even inside a UTF-8 character or between a CR and its LF.
 * An event the stream ends in the middle of is dropped, as the format requires. Kept on the library's 3.x line:
 * 4.x needs Node 22.
 */
export async function* parseServerSentEvents(
  chunks: AsyncIterable<Uint8Array | string>,
): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder("utf-8");
  let ready: ServerSentEvent[] = [];
  // The format's last-event-id buffer outlives the event that set it; the parser reports only each event's own.
  let lastEventId: string | undefined;
  const parser = createParser({
    onEvent(message) {
      if (message.id !== undefined) lastEventId = message.id;
      ready.push(toServerSentEvent(message, lastEventId));
    },
  });
  let endsInCr = false;
  for await (const chunk of chunks) {
    const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    if (text.length === 0) continue;
    endsInCr = text.charCodeAt(text.length - 1) === CR;
    parser.feed(text);
    if (ready.length === 0) continue;
    const events = ready;
    ready = [];
    yield* events;
  }
  // The parser holds a final CR back to see whether an LF follows; at the end of the stream none will, and an LF
  // completes that CR into one line ending without adding a line.
  if (endsInCr) parser.feed("\n");
  yield* ready;
}

const CR = 13;

function toServerSentEvent(message: EventSourceMessage, id: string | undefined): ServerSentEvent {
  const event: ServerSentEvent = { event: message.event || "message", data: message.data };
  if (id !== undefined) event.id = id;
  return event;
}
