import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import type { TransportProblem } from "./transport.js";
import { createWebSocketTransport, webSocketLimitOptions } from "./websocket-transport.js";

const servers: WebSocketServer[] = [];

async function connect(serverLimit: number) {
  const server = new WebSocketServer({
    host: "127.0.0.1",
    port: 0,
    ...webSocketLimitOptions({ maxMessageBytes: serverLimit }),
  });
  servers.push(server);
  await once(server, "listening");
  const accepted = once(server, "connection") as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const [[serverSocket]] = await Promise.all([accepted, once(client, "open")]);
  const received: string[] = [];
  const problems: TransportProblem[] = [];
  let closedWith: Error | undefined | "open" = "open";
  createWebSocketTransport(serverSocket, { limits: { maxMessageBytes: serverLimit } }).start({
    message: (text) => void received.push(text),
    problem: (problem) => void problems.push(problem),
    close: (error) => {
      closedWith = error;
    },
  });
  const sends: boolean[] = [];
  const send = client.send.bind(client);
  client.send = ((data: string, options: { fin?: boolean }) => {
    sends.push(options?.fin ?? true);
    return send(data, options);
  }) as typeof client.send;
  const sender = createWebSocketTransport(client);
  sender.start({ message: () => {}, problem: () => {}, close: () => {} });
  return { sender, client, received, problems, sends, closed: () => closedWith };
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    for (const client of server.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

describe("WebSocket framing", () => {
  it("sends up to 64 KiB as one frame and more as continuation frames of one message", async () => {
    const { sender, received, sends } = await connect(16 * 1024 * 1024);
    const expected: string[] = [];
    for (const size of [64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 200 * 1024]) {
      sends.length = 0;
      const message = "漢".repeat(Math.floor(size / 3)) + "x".repeat(size % 3);
      expected.push(message);
      sender.send(message);
      const bytes = Buffer.byteLength(message);
      expect(sends.length).toBe(Math.ceil(bytes / (64 * 1024)));
      expect(sends.at(-1)).toBe(true);
      expect(sends.slice(0, -1).every((fin) => fin === false)).toBe(true);
    }
    await expect.poll(() => received.length).toBe(expected.length);
    expect(received).toEqual(expected);
  });

  it("closes a connection whose peer sends a message over the receiver's limit", async () => {
    const { sender, closed } = await connect(100 * 1024);
    sender.send("x".repeat(300 * 1024));
    await expect.poll(() => closed() !== "open").toBe(true);
    expect(String(closed())).toContain("Max payload size exceeded");
  });

  it("takes a message of 4,096 fragments and refuses one of 4,097 with a typed problem, closing the socket", async () => {
    const { client, received, problems, closed } = await connect(16 * 1024 * 1024);
    const fragments = (count: number, letter: string) => {
      for (let index = 0; index < count; index++)
        client.send(letter, { binary: false, fin: index === count - 1 });
    };
    fragments(4096, "a");
    await expect.poll(() => received.length).toBe(1);
    expect(received[0]).toBe("a".repeat(4096));
    fragments(4097, "b");
    await expect.poll(() => closed() !== "open").toBe(true);
    expect(problems).toEqual([{ kind: "too_many_fragments", message: expect.stringContaining("fragments") }]);
    expect(closed()).toMatchObject({ name: "TransportLimitError", kind: "too_many_fragments" });
    expect(received).toHaveLength(1);
  });
});
