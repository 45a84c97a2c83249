import type { Readable, Writable } from "node:stream";
import {
  checkOutgoingSize,
  DEFAULT_TRANSPORT_LIMITS,
  type MessageTransport,
  STDIO_CHUNK_BYTES,
  splitUtf8,
  TransportClosedError,
  type TransportEvents,
  type TransportLimits,
} from "./transport.js";

export interface StdioTransportOptions {
  /** Where messages arrive: a child's stdout, or this process's stdin. */
  input: Readable;
  /** Where messages go: a child's stdin, or this process's stdout. */
  output: Writable;
  /** Messages above this many UTF-8 bytes are sent in chunk lines; 16 KiB. */
  chunkBytes?: number;
  limits?: Partial<TransportLimits>;
}

interface Reassembly {
  totalSize: number;
  received: number;
  pieces: string[];
  /** Set once the message broke a limit: its remaining lines are read and thrown away. */
  dropping: boolean;
}

/**
 * Newline-delimited JSON over a pair of streams. A message above `chunkBytes` goes as a `chunk_start
 * {total_size}` line, `chunk_data {data, offset}` lines of at most `chunkBytes` bytes each, and a `chunk_end`
 * line (sizes and offsets in UTF-8 bytes). Lines that are not JSON objects — a library printing to stdout — are
 * reported as noise and skipped. A message over the limits is read to its end and dropped, so one bad message
 * never desynchronises the stream.
 */
export function createStdioTransport(options: StdioTransportOptions): MessageTransport {
  const chunkBytes = options.chunkBytes ?? STDIO_CHUNK_BYTES;
  const limits: TransportLimits = { ...DEFAULT_TRANSPORT_LIMITS, ...options.limits };
  const { input, output } = options;
  let events: TransportEvents | undefined;
  let closed = false;
  let partial = "";
  let partialBytes = 0;
  let skippingLine = false;
  let reassembly: Reassembly | undefined;
  // Lines written in one turn of the event loop go out in one write: far fewer syscalls under load.
  let pending: string[] = [];
  let pendingChars = 0;
  let flushScheduled = false;

  const finish = (error?: Error) => {
    if (closed) return;
    closed = true;
    input.off("data", onData);
    input.off("end", onEnd);
    input.off("close", onInputClose);
    // The error listeners stay: a broken pipe may still report errors, which must not become uncaught.
    events?.close(error);
  };
  const onEnd = () => finish(new TransportClosedError("the peer closed its output"));
  const onInputClose = () => finish(new TransportClosedError("the input stream closed"));
  const onError = (error: Error) => finish(error);

  const lineLimit = limits.maxMessageBytes + 1024;

  function onData(chunk: string) {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf("\n", start);
      if (newline === -1) break;
      const piece = chunk.slice(start, newline);
      start = newline + 1;
      if (skippingLine) {
        skippingLine = false;
        partial = "";
        partialBytes = 0;
        continue;
      }
      const line = partial.length > 0 ? partial + piece : piece;
      partial = "";
      partialBytes = 0;
      onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
      if (closed) return;
    }
    if (start < chunk.length && !skippingLine) {
      const rest = chunk.slice(start);
      partialBytes += rest.length;
      if (partialBytes > lineLimit) {
        // A line longer than any allowed message: throw it away up to its newline.
        skippingLine = true;
        partial = "";
        partialBytes = 0;
        events?.problem({
          kind: "message_too_large",
          message: "a line exceeded the message limit and was dropped",
        });
      } else partial += rest;
    }
  }

  function onLine(line: string) {
    if (line.length === 0) return;
    if (line.startsWith('{"type"')) {
      const control = readControl(line);
      if (control) return onControl(control);
    }
    if (reassembly) {
      reassembly = undefined;
      events?.problem({ kind: "bad_frame", message: "a chunked message was interrupted by another line" });
    }
    if (line.charCodeAt(0) !== 123 /* { */) {
      events?.problem({
        kind: "noise",
        message: `skipped a line that is not a message (${line.slice(0, 40)})`,
      });
      return;
    }
    if (Buffer.byteLength(line) > limits.maxMessageBytes) {
      events?.problem({
        kind: "message_too_large",
        message: "a message exceeded the size limit and was dropped",
      });
      return;
    }
    events?.message(line);
  }

  function onControl(control: ChunkControl) {
    if (control.type === "chunk_start") {
      if (reassembly)
        events?.problem({ kind: "bad_frame", message: "a chunked message began before the last ended" });
      const tooLarge = control.total_size > limits.maxMessageBytes;
      if (tooLarge) {
        events?.problem({
          kind: "message_too_large",
          message: `a chunked message of ${control.total_size} bytes exceeds the ${limits.maxMessageBytes}-byte limit and was dropped`,
        });
      }
      reassembly = { totalSize: control.total_size, received: 0, pieces: [], dropping: tooLarge };
      return;
    }
    const current = reassembly;
    if (!current) {
      events?.problem({ kind: "bad_frame", message: `${control.type} outside a chunked message` });
      return;
    }
    if (control.type === "chunk_data") {
      if (current.dropping) return;
      if (current.pieces.length >= limits.maxFragments) {
        current.dropping = true;
        current.pieces = [];
        events?.problem({
          kind: "too_many_fragments",
          message: `a message came in more than ${limits.maxFragments} chunks and was dropped`,
        });
        return;
      }
      const bytes = Buffer.byteLength(control.data);
      if (control.offset !== current.received || current.received + bytes > current.totalSize) {
        current.dropping = true;
        current.pieces = [];
        events?.problem({
          kind: "bad_frame",
          message: "a chunk's offset or size does not match the message",
        });
        return;
      }
      current.pieces.push(control.data);
      current.received += bytes;
      return;
    }
    reassembly = undefined;
    if (current.dropping) return;
    if (current.received !== current.totalSize) {
      events?.problem({ kind: "bad_frame", message: "a chunked message ended short of its total_size" });
      return;
    }
    events?.message(current.pieces.join(""));
  }

  const flush = () => {
    flushScheduled = false;
    if (closed || pending.length === 0) return;
    const text = pending.join("");
    pending = [];
    pendingChars = 0;
    output.write(text);
  };

  const enqueue = (line: string) => {
    pending.push(line);
    pendingChars += line.length;
    if (pendingChars >= 64 * 1024) flush();
    else if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  };

  return {
    start(handlers) {
      events = handlers;
      input.setEncoding("utf8");
      input.on("data", onData);
      input.on("end", onEnd);
      input.on("close", onInputClose);
      input.on("error", onError);
      output.on("error", onError);
    },
    send(message) {
      if (closed) throw new TransportClosedError();
      // Most messages are small; only count bytes exactly when the characters alone could pass the threshold.
      const bytes = message.length * 3 <= chunkBytes ? message.length : Buffer.byteLength(message);
      if (bytes <= chunkBytes) {
        enqueue(`${message}\n`);
        return;
      }
      checkOutgoingSize(bytes, chunkBytes, limits);
      const lines = [`{"type":"chunk_start","total_size":${bytes}}\n`];
      let offset = 0;
      for (const piece of splitUtf8(message, chunkBytes)) {
        lines.push(`${JSON.stringify({ type: "chunk_data", data: piece, offset })}\n`);
        offset += Buffer.byteLength(piece);
      }
      lines.push('{"type":"chunk_end"}\n');
      enqueue(lines.join(""));
    },
    async close() {
      flush();
      finish();
      if (output.writableEnded || output.destroyed) return;
      await new Promise<void>((resolve) => output.end(() => resolve()));
    },
  };
}

type ChunkControl =
  | { type: "chunk_start"; total_size: number }
  | { type: "chunk_data"; data: string; offset: number }
  | { type: "chunk_end" };

function readControl(line: string): ChunkControl | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  switch (record.type) {
    case "chunk_start":
      return Number.isSafeInteger(record.total_size) && (record.total_size as number) >= 0
        ? { type: "chunk_start", total_size: record.total_size as number }
        : undefined;
    case "chunk_data":
      return typeof record.data === "string" && Number.isSafeInteger(record.offset)
        ? { type: "chunk_data", data: record.data, offset: record.offset as number }
        : undefined;
    case "chunk_end":
      return { type: "chunk_end" };
    default:
      return undefined;
  }
}
