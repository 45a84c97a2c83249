import {
  checkOutgoingSize,
  DEFAULT_TRANSPORT_LIMITS,
  type MessageTransport,
  TransportClosedError,
  type TransportEvents,
  type TransportLimits,
} from "./transport.js";

/**
 * Two linked transports in one process, for tests: what one sends the other receives on a later turn of the
 * event loop, in order, with the same size limits as the real transports. Closing either closes both.
 */
export function createInMemoryTransportPair(
  options: { limits?: Partial<TransportLimits> } = {},
): [MessageTransport, MessageTransport] {
  const limits: TransportLimits = { ...DEFAULT_TRANSPORT_LIMITS, ...options.limits };
  const ends = [new InMemoryEnd(limits), new InMemoryEnd(limits)] as const;
  ends[0].peer = ends[1];
  ends[1].peer = ends[0];
  return [ends[0], ends[1]];
}

class InMemoryEnd implements MessageTransport {
  peer: InMemoryEnd | undefined;
  private events: TransportEvents | undefined;
  private closed = false;
  private readonly inbox: string[] = [];
  private draining = false;

  constructor(private readonly limits: TransportLimits) {}

  start(events: TransportEvents): void {
    this.events = events;
    this.drain();
  }

  send(message: string): void {
    if (this.closed) throw new TransportClosedError();
    checkOutgoingSize(Buffer.byteLength(message), this.limits.maxMessageBytes, this.limits);
    this.peer?.receive(message);
  }

  /** Delivers a raw message as if it had come over the wire, bypassing the sender's checks (for tests). */
  receive(message: string): void {
    if (this.closed) return;
    this.inbox.push(message);
    if (!this.draining) {
      this.draining = true;
      setImmediate(() => this.drain());
    }
  }

  private drain(): void {
    this.draining = false;
    if (!this.events) return;
    while (this.inbox.length > 0 && !this.closed) this.events.message(this.inbox.shift()!);
  }

  async close(): Promise<void> {
    this.shut();
    this.peer?.shut(new TransportClosedError("the peer closed the channel"));
  }

  shut(error?: Error): void {
    if (this.closed) return;
    // What the peer sent before it closed still arrives, as it would over a pipe.
    this.drain();
    this.closed = true;
    this.inbox.length = 0;
    this.events?.close(error);
  }
}
