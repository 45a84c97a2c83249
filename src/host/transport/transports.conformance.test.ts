import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import { describeHostTransportConformance } from "../../testing/host-transport-conformance.js";
import { createInMemoryTransportPair } from "./in-memory-transport.js";
import { createStdioTransport } from "./stdio-transport.js";
import { createWebSocketTransport, webSocketMaxPayload } from "./websocket-transport.js";

describeHostTransportConformance("in-memory", async ({ limits }) => {
  const [a, b] = createInMemoryTransportPair(limits ? { limits } : {});
  return { a, b, lose: () => a.close() };
});

describeHostTransportConformance("stdio", async ({ limits }) => {
  const aToB = new PassThrough();
  const bToA = new PassThrough();
  const a = createStdioTransport({ input: bToA, output: aToB, ...(limits ? { limits } : {}) });
  const b = createStdioTransport({ input: aToB, output: bToA, ...(limits ? { limits } : {}) });
  return {
    a,
    b,
    lose: () => {
      aToB.destroy(new Error("pipe broken"));
      bToA.destroy(new Error("pipe broken"));
    },
  };
});

describeHostTransportConformance("websocket", async ({ limits }) => {
  const maxPayload = webSocketMaxPayload(limits);
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, maxPayload });
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const accepted = once(server, "connection") as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${port}`, { maxPayload });
  const [[serverSocket]] = await Promise.all([accepted, once(client, "open")]);
  return {
    a: createWebSocketTransport(client, limits ? { limits } : {}),
    b: createWebSocketTransport(serverSocket, limits ? { limits } : {}),
    lose: () => serverSocket.terminate(),
    dispose: async () => {
      client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
});
