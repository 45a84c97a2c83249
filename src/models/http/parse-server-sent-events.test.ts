import { describe, expect, it } from "vitest";
import { parseServerSentEvents, type ServerSentEvent } from "./parse-server-sent-events.js";

async function parse(chunks: (string | Uint8Array)[]): Promise<ServerSentEvent[]> {
  async function* source() {
    for (const chunk of chunks) yield chunk;
  }
  const events: ServerSentEvent[] = [];
  for await (const event of parseServerSentEvents(source())) events.push(event);
  return events;
}

const STREAM = [
  ": a comment the parser skips",
  "event: message_start",
  'data: {"type":"message_start"}',
  "",
  "event: content_block_delta",
  'data: {"type":"content_block_delta","delta":{"text":"héllo 🌍"}}',
  "",
  "data: first line",
  "data:second line",
  "data",
  "id: 7",
  "",
  "event: ping",
  "",
  "event: message_stop",
  'data: {"type":"message_stop"}',
  "",
  "",
].join("\n");

const EXPECTED: ServerSentEvent[] = [
  { event: "message_start", data: '{"type":"message_start"}' },
  { event: "content_block_delta", data: '{"type":"content_block_delta","delta":{"text":"héllo 🌍"}}' },
  { event: "message", data: "first line\nsecond line\n", id: "7" },
  { event: "message_stop", data: '{"type":"message_stop"}', id: "7" },
];

describe("parseServerSentEvents", () => {
  it("reads events, names, multi-line data, ids and comments", async () => {
    expect(await parse([STREAM])).toEqual(EXPECTED);
  });

  it("reads CRLF and CR line endings alike", async () => {
    expect(await parse([STREAM.replaceAll("\n", "\r\n")])).toEqual(EXPECTED);
    expect(await parse([STREAM.replaceAll("\n", "\r")])).toEqual(EXPECTED);
  });

  it("gives the same events whatever the chunk boundaries, for every split point", async () => {
    for (const ending of ["\n", "\r\n", "\r"]) {
      const text = STREAM.replaceAll("\n", ending);
      for (let at = 0; at <= text.length; at++) {
        expect(await parse([text.slice(0, at), text.slice(at)])).toEqual(EXPECTED);
      }
    }
  });

  it("decodes UTF-8 split inside a character, byte by byte", async () => {
    const bytes = new TextEncoder().encode(STREAM.replaceAll("\n", "\r\n"));
    const chunks = Array.from(bytes, (byte) => Uint8Array.of(byte));
    expect(await parse(chunks)).toEqual(EXPECTED);
  });

  it("keeps an empty data line and a value's spaces after the first", async () => {
    expect(await parse(["data:\n\ndata:  two spaces\n\n"])).toEqual([
      { event: "message", data: "" },
      { event: "message", data: " two spaces" },
    ]);
  });

  it("drops an event the stream ends in the middle of", async () => {
    expect(await parse(['data: {"complete":true}\n\ndata: {"cut', "off"])).toEqual([
      { event: "message", data: '{"complete":true}' },
    ]);
    expect(await parse(["data: no blank line\n"])).toEqual([]);
  });

  it("ignores retry and unknown fields, and an id holding NUL", async () => {
    expect(await parse(["retry: 100\nfoo: bar\nid: a\0b\ndata: x\n\n"])).toEqual([
      { event: "message", data: "x" },
    ]);
  });
});
