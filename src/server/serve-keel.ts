import type { Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { serve } from "@hono/node-server";
import { ConfigError } from "../errors/error-classes.js";
import type { Runtime } from "../runtime/runtime.js";
import { createKeelApp, type KeelHandlerOptions } from "./create-keel-handler.js";

export interface ServeKeelOptions extends KeelHandlerOptions {
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. Any other than loopback needs a token. */
  host?: string;
  /** The largest request head (request line and headers), in bytes; a larger one is a 431. Default 16 KiB. */
  maxHeaderBytes?: number;
  /** How long a client may take to send its request head, in ms; a slower one is answered 408. Default 10,000. */
  headersTimeoutMs?: number;
  /**
   * How long a client may take to send a whole request, head and body, in ms; a slower one is answered 408 (or
   * cut off, when the answer has begun). 0 for no limit. Default 60,000. Event streams are not affected: the
   * limit is on what the client sends, not on how long the answer lasts.
   */
  requestTimeoutMs?: number;
  /** How often the two timeouts above are checked, in ms, so a client may get up to this much more. Default 1,000. */
  timeoutCheckIntervalMs?: number;
  /**
   * Before listening, resume the store's durable runs left `running` by a process that died (from their latest
   * checkpoint), so clients re-attaching after a restart follow them to their end. Only for a store no other
   * live server shares: such a server's runs are `running` too.
   */
  resumeInterrupted?: boolean;
  /** Told of what the server does on its own (a run resumed, one it could not resume). */
  onNotice?: (message: string) => void;
}

export interface KeelServer {
  /** Where it listens, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  /** Stop listening and end open connections (event streams included); the runtime is the caller's to close. */
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

interface ClientErrorAnswer {
  status: number;
  reason: string;
  code: string;
  message: string;
  hint: string;
}

const MALFORMED: ClientErrorAnswer = {
  status: 400,
  reason: "Bad Request",
  code: "request.malformed",
  message: "The request is not valid HTTP",
  hint: "Send a well-formed HTTP/1.1 request",
};

/** What Node's own refusals of a request are answered with, by Node's error code. */
const CLIENT_ERRORS: Readonly<Record<string, ClientErrorAnswer>> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: "Request Header Fields Too Large",
    code: "request.headers_too_large",
    message: "The request's headers are too large",
    hint: "Send smaller headers; the server's limit is maxHeaderBytes",
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    reason: "Request Timeout",
    code: "request.timeout",
    message: "The request took too long to arrive",
    hint: "Send the whole request at once; the server's limits are headersTimeoutMs and requestTimeoutMs",
  },
};

/** Serve a runtime's agents on Node with `@hono/node-server`. */
export async function serveKeel(runtime: Runtime, options: ServeKeelOptions = {}): Promise<KeelServer> {
  const host = options.host ?? "127.0.0.1";
  const loopback = LOOPBACK.has(host);
  const hasToken = options.token !== undefined && options.token.length > 0;
  if (!hasToken && !loopback)
    throw new ConfigError(
      `Serving on ${host} without a token would let anyone on the network run the agents`,
      {
        hint: "Give a token (--token or KEEL_SERVER_TOKEN), or serve on 127.0.0.1",
      },
    );
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = options.requestTimeoutMs ?? 60_000;
  if (requestTimeout > 0 && headersTimeout > requestTimeout)
    throw new ConfigError(
      `The header timeout (${headersTimeout} ms) is longer than the request timeout (${requestTimeout} ms)`,
      { hint: "Give headersTimeoutMs at most requestTimeoutMs, or requestTimeoutMs: 0 for no request limit" },
    );
  if (options.resumeInterrupted === true) await resumeInterrupted(runtime, options.onNotice);
  let port = options.port ?? 8787;
  const app = createKeelApp(runtime, {
    ...options,
    // On loopback a web page elsewhere could reach the server through a name it rebinds to 127.0.0.1: only
    // the loopback names, with the port, are answered.
    ...(loopback && options.allowedHosts === undefined
      ? { allowedHosts: () => [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`] }
      : {}),
  });
  const sockets = new Set<Socket>();
  const server = await new Promise<Server>((resolve, reject) => {
    const created = serve(
      {
        fetch: app.fetch,
        port,
        hostname: host,
        serverOptions: {
          maxHeaderSize: options.maxHeaderBytes ?? 16 * 1024,
          headersTimeout,
          requestTimeout,
          // Node checks the timeouts every 30 s by default: a slow client would hold its socket that much longer.
          connectionsCheckingInterval: options.timeoutCheckIntervalMs ?? 1000,
        },
      },
      (info: AddressInfo) => {
        port = info.port;
        resolve(created as Server);
      },
    ) as Server;
    created.once("error", reject);
    created.on("connection", (socket: Socket) => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
    });
    // Node answers a malformed or oversized request head itself, with no body; answer in the API's JSON shape.
    created.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
      // An answer already begun on the socket cannot be followed by another: the connection is cut instead.
      const begun = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
        ?.headersSent;
      if (!socket.writable || begun === true) return socket.destroy();
      const answer = CLIENT_ERRORS[error.code ?? ""] ?? MALFORMED;
      const { status, reason, code, message, hint } = answer;
      const body = JSON.stringify({ error: { code, message, hint } });
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
  });
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

async function resumeInterrupted(
  runtime: Runtime,
  notice: ((message: string) => void) | undefined,
): Promise<void> {
  for (const record of await runtime.listRuns({ status: "running" })) {
    if (runtime.liveRun(record.runId) !== undefined) continue;
    const checkpoints = await runtime.listRunCheckpoints(record.runId);
    if (checkpoints.length === 0) {
      notice?.(`Run ${record.runId} was interrupted and has no checkpoint: it cannot be resumed`);
      continue;
    }
    try {
      const chunks = runtime.stream({
        agentId: record.agentId,
        inputText: "",
        resumeFromCheckpoint: checkpoints.at(-1)!,
      });
      // Resolves once the run is live here, so a client that re-attaches at once follows it.
      await chunks.next();
      await chunks.return?.();
      notice?.(`Resumed interrupted run ${record.runId}`);
    } catch (error) {
      notice?.(`Run ${record.runId} could not be resumed: ${(error as Error).message}`);
    }
  }
}
