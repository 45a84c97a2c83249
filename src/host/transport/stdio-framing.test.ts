import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createStdioTransport } from "./stdio-transport.js";
import { splitUtf8, type TransportProblem } from "./transport.js";

/** A transport reading `input`, with what it delivers and reports collected. */
function receiver(options: { limits?: { maxMessageBytes?: number; maxFragments?: number } } = {}) {
  const input = new PassThrough();
  const messages: string[] = [];
  const problems: TransportProblem[] = [];
  const transport = createStdioTransport({ input, output: new PassThrough(), ...options });
  transport.start({
    message: (text) => void messages.push(text),
    problem: (problem) => void problems.push(problem),
    close: () => {},
  });
  const feed = async (...lines: string[]) => {
    input.write(lines.map((line) => `${line}\n`).join(""));
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { messages, problems, feed };
}

/** The lines a transport writes for `message`. */
async function framesOf(message: string, chunkBytes?: number): Promise<string[]> {
  const output = new PassThrough();
  output.setEncoding("utf8");
  let written = "";
  output.on("data", (text: string) => {
    written += text;
  });
  const transport = createStdioTransport({
    input: new PassThrough(),
    output,
    ...(chunkBytes ? { chunkBytes } : {}),
  });
  transport.start({ message: () => {}, problem: () => {}, close: () => {} });
  transport.send(message);
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  return written.split("\n").filter((line) => line.length > 0);
}

/** A small seeded generator, so a failing case can be reproduced. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const ALPHABET = ["a", "\n", '"', "\\", "é", "漢", "😀", "\u0000"];

function randomText(next: () => number, length: number): string {
  // Runs of one character keep generation cheap while still mixing widths across every cut.
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const run = ALPHABET[Math.floor(next() * ALPHABET.length)]!.repeat(1 + Math.floor(next() * 64));
    parts.push(run);
    size += run.length;
  }
  return parts.join("");
}

describe("stdio framing", () => {
  it("sends a message of at most 16 KiB as one line and a larger one as chunk lines", async () => {
    for (const size of [16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1]) {
      const message = JSON.stringify({ text: "x".repeat(size - 11) });
      const bytes = Buffer.byteLength(message);
      const lines = await framesOf(message);
      if (bytes <= 16 * 1024) {
        expect(lines).toEqual([message]);
        continue;
      }
      const frames = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(frames[0]).toEqual({ type: "chunk_start", total_size: bytes });
      expect(frames.at(-1)).toEqual({ type: "chunk_end" });
      const data = frames.slice(1, -1);
      expect(data.length).toBe(Math.ceil(bytes / (16 * 1024)));
      let offset = 0;
      for (const frame of data) {
        expect(frame.offset).toBe(offset);
        offset += Buffer.byteLength(frame.data as string);
        expect(Buffer.byteLength(frame.data as string)).toBeLessThanOrEqual(16 * 1024);
      }
      expect(data.map((frame) => frame.data).join("")).toBe(message);
    }
  });

  it("round-trips random messages of every size around the threshold, any characters", async () => {
    const next = random(20_261_126);
    const { messages, feed } = receiver();
    const sent: string[] = [];
    for (let round = 0; round < 60; round++) {
      const size = Math.floor(16 * 1024 - 64 + next() * 128) + (round % 3) * 48 * 1024;
      const text = randomText(next, size);
      const message = JSON.stringify({ text });
      sent.push(message);
      await feed(...(await framesOf(message)));
    }
    expect(messages).toEqual(sent);
  });

  it("reads frames written the way the Python runtime writes them", async () => {
    const { messages, feed } = receiver();
    await feed(
      '{"type": "chunk_start", "total_size": 9}',
      '{"type": "chunk_data", "data": "abcd", "offset": 0}',
      '{"type": "chunk_data", "data": "efgh", "offset": 4}',
      '{"type": "chunk_data", "data": "i", "offset": 8}',
      '{"type": "chunk_end"}',
      '{"seq_id": 1, "code": 0, "message": "", "data": {}}',
    );
    expect(messages).toEqual(["abcdefghi", '{"seq_id": 1, "code": 0, "message": "", "data": {}}']);
  });

  it("drops a broken chunk sequence, reports it, and reads the next message", async () => {
    const cases: [string[], TransportProblem["kind"]][] = [
      [
        [
          '{"type":"chunk_start","total_size":4}',
          '{"type":"chunk_data","data":"ab","offset":1}',
          '{"type":"chunk_end"}',
        ],
        "bad_frame",
      ],
      [
        [
          '{"type":"chunk_start","total_size":4}',
          '{"type":"chunk_data","data":"ab","offset":0}',
          '{"type":"chunk_end"}',
        ],
        "bad_frame",
      ],
      [['{"type":"chunk_data","data":"ab","offset":0}'], "bad_frame"],
      [
        [
          '{"type":"chunk_start","total_size":99999999}',
          '{"type":"chunk_data","data":"ab","offset":0}',
          '{"type":"chunk_end"}',
        ],
        "message_too_large",
      ],
      [
        [
          '{"type":"chunk_start","total_size":3}',
          ...["a", "b", "c"].map((data, offset) => JSON.stringify({ type: "chunk_data", data, offset })),
          '{"type":"chunk_end"}',
        ],
        "too_many_fragments",
      ],
      [["print output from a library"], "noise"],
    ];
    for (const [lines, kind] of cases) {
      const { messages, problems, feed } = receiver({ limits: { maxMessageBytes: 1024, maxFragments: 2 } });
      await feed(...lines, '{"seq_id":1,"code":0,"message":"","data":{}}');
      expect(problems.map((problem) => problem.kind)).toContain(kind);
      expect(messages).toEqual(['{"seq_id":1,"code":0,"message":"","data":{}}']);
    }
  });

  it("drops a single line over the message limit without buffering it whole", async () => {
    const { messages, problems, feed } = receiver({ limits: { maxMessageBytes: 1024 } });
    await feed(
      `{"seq_id":1,"action":"x","data":{"t":"${"y".repeat(4096)}"}}`,
      '{"seq_id":2,"code":0,"message":"","data":{}}',
    );
    expect(problems.map((problem) => problem.kind)).toEqual(["message_too_large"]);
    expect(messages).toEqual(['{"seq_id":2,"code":0,"message":"","data":{}}']);
  });
});

describe("splitUtf8", () => {
  it("cuts at code points, within the byte bound, and joins back to the text", () => {
    const next = random(7);
    for (let round = 0; round < 200; round++) {
      const text = randomText(next, Math.floor(next() * 400));
      const bound = 4 + Math.floor(next() * 40);
      const pieces = splitUtf8(text, bound);
      expect(pieces.join("")).toBe(text);
      for (const piece of pieces) {
        expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(bound);
        expect(Buffer.from(piece).toString()).toBe(piece);
      }
    }
  });
});
