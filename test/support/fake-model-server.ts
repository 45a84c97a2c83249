import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { ModelClock } from "../../src/models/http/model-clock.js";

/** A request as the fake server received it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON (undefined when it was not JSON). */
  body: unknown;
  rawBody: string;
}

/** How the server answers one request. */
export type Reply = (response: ServerResponse, request: ReceivedRequest) => void | Promise<void>;

/**
 * An in-process `node:http` server that plays a model vendor: each request gets the next queued reply (the
 * last one repeats) and is recorded. `close()` ends every connection, so no handle outlives a test.
 */
export class FakeModelServer {
  readonly requests: ReceivedRequest[] = [];
  private replies: Reply[] = [];
  private readonly sockets = new Set<Socket>();
  /** Sockets that carried a request and are still open. */
  private readonly busySockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeModelServer> {
    const server = createServer();
    const fake = new FakeModelServer(server);
    server.on("connection", (socket) => {
      fake.sockets.add(socket);
      socket.on("close", () => {
        fake.sockets.delete(socket);
        fake.busySockets.delete(socket);
      });
    });
    server.on("request", (request, response) => {
      if (!request.socket.destroyed) fake.busySockets.add(request.socket);
      let raw = "";
      request.setEncoding("utf8");
      request.on("data", (chunk: string) => {
        raw += chunk;
      });
      request.on("end", () => {
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          body = undefined;
        }
        const received: ReceivedRequest = {
          method: request.method ?? "",
          path: request.url ?? "",
          headers: request.headers,
          body,
          rawBody: raw,
        };
        fake.requests.push(received);
        const reply = fake.replies.length > 1 ? fake.replies.shift()! : fake.replies[0];
        if (!reply) {
          response.writeHead(500, { "content-type": "application/json" });
          response.end(JSON.stringify({ error: { type: "test_error", message: "no reply queued" } }));
          return;
        }
        Promise.resolve(reply(response, received)).catch((error: unknown) => {
          response.destroy(error as Error);
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return fake;
  }

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /**
   * Connections that carried a request and are still open. (After an aborted request undici may open a fresh
   * idle connection for its pool; that one carries nothing and is not counted.)
   */
  get openRequestSockets(): number {
    return this.busySockets.size;
  }

  /** Set the replies, one per request from now on (earlier ones not yet used are dropped); the last repeats. */
  reply(...replies: Reply[]): this {
    this.replies = [...replies];
    return this;
  }

  /** Wait (up to a second) until every connection that carried a request is closed, and say how many are not. */
  async settledRequestSockets(): Promise<number> {
    for (let tries = 0; tries < 200 && this.busySockets.size > 0; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return this.busySockets.size;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The text of an SSE stream: `[event, data]` pairs (data objects are JSON-encoded), each ended by a blank line. */
export function sseText(events: readonly (readonly [string | null, unknown])[]): string {
  let text = "";
  for (const [event, data] of events) {
    if (event !== null) text += `event: ${event}\n`;
    text += `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
  }
  return text;
}

/** Answer 200 with an event stream, written in pieces of `pieceSize` characters (pieces split lines anywhere). */
export function streamReply(
  text: string,
  options: { pieceSize?: number; headers?: Record<string, string>; dropAfter?: number } = {},
): Reply {
  return async (response) => {
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      ...options.headers,
    });
    const size = options.pieceSize ?? 37;
    const end = options.dropAfter ?? text.length;
    for (let index = 0; index < end; index += size) {
      response.write(text.slice(index, Math.min(index + size, end)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (options.dropAfter !== undefined) {
      response.socket?.destroy();
      return;
    }
    response.end();
  };
}

/** Answer with a JSON body. */
export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (response) => {
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(JSON.stringify(body));
  };
}

/** Never answer (a slow first byte); the client's timeout has to end it. */
export function silentReply(): Reply {
  return () => {};
}

/** A clock whose sleeps return at once and are recorded; `now` moves by each sleep. */
export class FakeClock implements ModelClock {
  readonly sleeps: number[] = [];
  private time = 1_700_000_000_000;

  constructor(private readonly randomValue = 0) {}

  now(): number {
    return this.time;
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    this.sleeps.push(ms);
    this.time += ms;
  }

  random(): number {
    return this.randomValue;
  }

  advance(ms: number): void {
    this.time += ms;
  }
}
