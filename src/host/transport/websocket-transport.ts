import { type ClientOptions, type RawData, WebSocket } from "ws";
import {
  checkOutgoingSize,
  DEFAULT_TRANSPORT_LIMITS,
  type MessageTransport,
  splitUtf8,
  TransportClosedError,
  type TransportEvents,
  TransportLimitError,
  type TransportLimits,
  type TransportProblemKind,
  WEBSOCKET_CHUNK_BYTES,
} from "./transport.js";

export interface WebSocketTransportOptions {
  /** Messages above this many UTF-8 bytes are sent as several frames of one message; 64 KiB. */
  chunkBytes?: number;
  limits?: Partial<TransportLimits>;
}

/**
 * Messages over an open `ws` WebSocket, one text message each. A message above `chunkBytes` is sent as
 * continuation frames of one WebSocket message, which any receiver reassembles on its own; the receiving side's
 * size bound is the socket's `maxPayload` (set it to the message limit when creating the socket or server —
 * {@link webSocketMaxPayload}), which closes the connection on a larger message, as the plugin runtime does.
 */
export function createWebSocketTransport(
  socket: WebSocket,
  options: WebSocketTransportOptions = {},
): MessageTransport {
  const chunkBytes = options.chunkBytes ?? WEBSOCKET_CHUNK_BYTES;
  const limits: TransportLimits = { ...DEFAULT_TRANSPORT_LIMITS, ...options.limits };
  let events: TransportEvents | undefined;
  let closed = false;

  const finish = (error?: Error) => {
    if (closed) return;
    closed = true;
    socket.off("message", onMessage);
    socket.off("close", onClose);
    events?.close(error);
  };
  const onClose = (code: number, reason: Buffer) =>
    finish(
      code === 1000
        ? undefined
        : new TransportClosedError(`the WebSocket closed (${code} ${reason.toString()})`),
    );
  const onError = (error: Error) => {
    // `ws` refuses a message over its bounds and closes the connection (1009, 1008): a frame boundary lost in
    // the middle of a message cannot be found again, so dropping just that message is not possible here.
    const kind = LIMIT_ERRORS[(error as { code?: string }).code ?? ""];
    if (kind === undefined) return finish(error);
    events?.problem({ kind, message: error.message });
    finish(new TransportLimitError(kind, `the WebSocket was closed: ${error.message}`));
  };
  const onMessage = (data: RawData, isBinary: boolean) => {
    const text = isBinary ? undefined : rawText(data);
    if (text === undefined) {
      events?.problem({ kind: "bad_frame", message: "a binary WebSocket message was dropped" });
      return;
    }
    events?.message(text);
  };

  return {
    start(handlers) {
      events = handlers;
      socket.on("message", onMessage);
      socket.on("close", onClose);
      socket.on("error", onError);
      if (socket.readyState !== socket.OPEN) finish(new TransportClosedError("the WebSocket is not open"));
    },
    send(message) {
      if (closed || socket.readyState !== socket.OPEN) throw new TransportClosedError();
      const bytes = message.length * 3 <= chunkBytes ? message.length : Buffer.byteLength(message);
      if (bytes <= chunkBytes) {
        socket.send(message);
        return;
      }
      checkOutgoingSize(bytes, chunkBytes, limits);
      const pieces = splitUtf8(message, chunkBytes);
      pieces.forEach((piece, index) => {
        socket.send(piece, { binary: false, fin: index === pieces.length - 1 });
      });
    },
    async close() {
      if (closed) return;
      const done = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.close(1000);
      finish();
      if (socket.readyState !== socket.CLOSED) await done;
    },
  };
}

const LIMIT_ERRORS: Record<string, TransportProblemKind> = {
  WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: "message_too_large",
  WS_ERR_TOO_MANY_BUFFERED_PARTS: "too_many_fragments",
};

/** The `maxPayload` a socket or server needs so that a whole message within the limits always fits. */
export function webSocketMaxPayload(limits: Partial<TransportLimits> = {}): number {
  return (limits.maxMessageBytes ?? DEFAULT_TRANSPORT_LIMITS.maxMessageBytes) + 1024;
}

/**
 * The options a `ws` socket or server needs for the limits: the message size bound and the fragment count
 * bound are checked as frames arrive, before a message is assembled.
 */
export function webSocketLimitOptions(limits: Partial<TransportLimits> = {}): {
  maxPayload: number;
  maxFragments: number;
} {
  return {
    maxPayload: webSocketMaxPayload(limits),
    maxFragments: limits.maxFragments ?? DEFAULT_TRANSPORT_LIMITS.maxFragments,
  };
}

/**
 * Opens a WebSocket to `url` with the limits' bounds, resolving once it is open; a refused or failed handshake
 * (10 s by default) rejects.
 */
export function openWebSocket(
  url: string,
  options: ClientOptions & { limits?: Partial<TransportLimits> } = {},
): Promise<WebSocket> {
  const { limits, ...clientOptions } = options;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, {
      handshakeTimeout: 10_000,
      perMessageDeflate: false,
      ...webSocketLimitOptions(limits),
      ...clientOptions,
    });
    const onOpen = () => {
      socket.off("error", onError);
      resolve(socket);
    };
    const onError = (error: Error) => {
      socket.off("open", onOpen);
      // `ws` tears a failed handshake down itself; a later error of the dead socket has nowhere to go.
      socket.on("error", () => {});
      reject(error);
    };
    socket.once("open", onOpen);
    socket.once("error", onError);
  });
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}
