import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { appConfigSchema } from "../src/config/app-config-schema.js";
import { listenKeelRunner } from "../src/host/index.js";
import { openWebSocket } from "../src/host/transport/websocket-transport.js";
import { Runtime } from "../src/index.js";
import { HOST_RUNNER_CONFIG } from "./support/host-scenario.js";

/**
 * Per-message compression stays off on both of Keel's WebSocket ends: a runner's results are small frames sent
 * one at a time, and a zlib pass on each would be paid in every result's latency. The ends refuse it even when
 * the other side asks (a `ws` client offers it by default) or offers it (a server that accepts it).
 */

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe("WebSocket compression", () => {
  it("is not taken by a Keel runner's server when a host offers it", async () => {
    const runtime = await Runtime.fromDict(HOST_RUNNER_CONFIG);
    const server = await listenKeelRunner({
      runtime,
      agents: appConfigSchema().parse(HOST_RUNNER_CONFIG).agents,
      url: "ws://127.0.0.1:0/control/ws",
    });
    closers.push(async () => {
      await server.close();
      await runtime.close();
    });
    const client = new WebSocket(server.url, { perMessageDeflate: true });
    closers.push(() => client.terminate());
    await once(client, "open");
    expect(client.extensions).toBe("");
  });

  it("is not offered by a Keel host's socket to a server that would take it", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: true });
    await once(server, "listening");
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const offered: (string | undefined)[] = [];
    server.on("connection", (_socket, request) => offered.push(request.headers["sec-websocket-extensions"]));
    const socket = await openWebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    closers.push(() => socket.terminate());
    expect(socket.extensions).toBe("");
    await new Promise((resolve) => setImmediate(resolve));
    expect(offered).toEqual([undefined]);
  });

  it("would be taken by a plain `ws` pair, so the two checks above can tell", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: true });
    await once(server, "listening");
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    closers.push(() => client.terminate());
    await once(client, "open");
    expect(client.extensions).toContain("permessage-deflate");
  });
});
