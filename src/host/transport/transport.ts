/**
 * A transport carries whole messages (JSON texts) between two ends, in both directions; how a large message is
 * cut into frames on the way is its business. Three members and three callbacks: the action channel is written
 * once against this and runs over stdio, WebSocket or memory alike.
 */
export interface MessageTransport {
  /** Starts delivering what arrives to `events`; called once. */
  start(events: TransportEvents): void;
  /**
   * Queues one message. Throws {@link TransportLimitError} for a message over the limits and
   * {@link TransportClosedError} once closed; a failure later on the wire arrives as `events.close`.
   */
  send(message: string): void;
  /** Closes both directions; `events.close` follows once. */
  close(): Promise<void>;
}

export interface TransportEvents {
  message(text: string): void;
  /** Something arrived that is not a message and was dropped (a frame over the limits, a broken sequence). */
  problem(problem: TransportProblem): void;
  /** The channel is gone; `error` says why when it was not closed on purpose. Called once. */
  close(error?: Error): void;
}

export type TransportProblemKind = "message_too_large" | "too_many_fragments" | "bad_frame" | "noise";

export interface TransportProblem {
  kind: TransportProblemKind;
  message: string;
}

/** Bounds on one message, whatever its framing. */
export interface TransportLimits {
  /** UTF-8 bytes of one whole message. */
  maxMessageBytes: number;
  /** Frames one message may be cut into. */
  maxFragments: number;
}

export const DEFAULT_TRANSPORT_LIMITS: Readonly<TransportLimits> = Object.freeze({
  maxMessageBytes: 16 * 1024 * 1024,
  maxFragments: 4096,
});

/** Above this many UTF-8 bytes a stdio message goes as `chunk_start / chunk_data / chunk_end` lines. */
export const STDIO_CHUNK_BYTES = 16 * 1024;
/** Above this many UTF-8 bytes a WebSocket message goes as several frames of one message. */
export const WEBSOCKET_CHUNK_BYTES = 64 * 1024;

export class TransportLimitError extends Error {
  readonly kind: TransportProblemKind;
  constructor(kind: TransportProblemKind, message: string) {
    super(message);
    this.name = "TransportLimitError";
    this.kind = kind;
  }
}

export class TransportClosedError extends Error {
  constructor(message = "the transport is closed") {
    super(message);
    this.name = "TransportClosedError";
  }
}

/** Refuses a message to send that is over the limits once cut into frames of `chunkBytes`. */
export function checkOutgoingSize(byteLength: number, chunkBytes: number, limits: TransportLimits): void {
  if (byteLength > limits.maxMessageBytes) {
    throw new TransportLimitError(
      "message_too_large",
      `message of ${byteLength} bytes exceeds the ${limits.maxMessageBytes}-byte limit`,
    );
  }
  if (Math.ceil(byteLength / chunkBytes) > limits.maxFragments) {
    throw new TransportLimitError(
      "too_many_fragments",
      `message would need more than ${limits.maxFragments} frames`,
    );
  }
}

/**
 * Cuts `text` into pieces of at most `maxBytes` UTF-8 bytes without splitting a code point, so every piece is
 * valid text on its own (a surrogate pair stays together).
 */
export function splitUtf8(text: string, maxBytes: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    let width: number;
    let units = 1;
    if (code < 0x80) width = 1;
    else if (code < 0x800) width = 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        width = 4;
        units = 2;
      } else width = 3;
    } else width = 3;
    if (bytes + width > maxBytes && index > start) {
      pieces.push(text.slice(start, index));
      start = index;
      bytes = 0;
    }
    bytes += width;
    index += units - 1;
  }
  if (start < text.length || pieces.length === 0) pieces.push(text.slice(start));
  return pieces;
}
