/** One server-sent event: its `event:` name ("message" when none was given), its joined `data:` lines. */
export interface ServerSentEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * Read server-sent events from a byte stream (the WHATWG event-stream format): `event:`, `data:` (several lines
 * joined with "\n"), `id:`, comments (`:` lines) ignored, lines ended by LF, CRLF or CR, and chunk boundaries
 * anywhere, even inside a UTF-8 character or between a CR and its LF. An event is dispatched at its blank line;
 * an event the stream ends in the middle of is dropped, as the format requires.
 */
export async function* parseServerSentEvents(
  chunks: AsyncIterable<Uint8Array | string>,
): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder("utf-8");
  const parser = new EventAssembler();
  let pending = "";
  // A chunk that ends in CR may be followed by the LF of the same line ending.
  let skipLeadingLf = false;
  for await (const chunk of chunks) {
    let text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    if (skipLeadingLf && text.length > 0) {
      if (text.charCodeAt(0) === LF) text = text.slice(1);
      skipLeadingLf = false;
    }
    pending += text;
    let start = 0;
    for (let index = 0; index < pending.length; index++) {
      const code = pending.charCodeAt(index);
      if (code !== LF && code !== CR) continue;
      const event = parser.line(pending.slice(start, index));
      if (code === CR) {
        if (index + 1 < pending.length) {
          if (pending.charCodeAt(index + 1) === LF) index++;
        } else {
          skipLeadingLf = true;
        }
      }
      start = index + 1;
      if (event) yield event;
    }
    pending = pending.slice(start);
  }
}

const LF = 10;
const CR = 13;

/** The field-by-field state of the event being read. */
class EventAssembler {
  private event = "";
  private data: string[] = [];
  private id: string | undefined;

  /** Take one line; a blank line returns the finished event, if it has data. */
  line(line: string): ServerSentEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.charCodeAt(0) === 58 /* ":" */) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* " " */) value = value.slice(1);
    switch (field) {
      case "event":
        this.event = value;
        break;
      case "data":
        this.data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) this.id = value;
        break;
      // `retry` and unknown fields do not concern a one-shot request.
    }
    return undefined;
  }

  private dispatch(): ServerSentEvent | undefined {
    const data = this.data;
    const name = this.event;
    this.event = "";
    if (data.length === 0) return undefined;
    this.data = [];
    const event: ServerSentEvent = { event: name || "message", data: data.join("\n") };
    if (this.id !== undefined) event.id = this.id;
    return event;
  }
}
