import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { ActionChannel, type ActionChannelOptions } from "../transport/action-channel.js";
import type { MessageTransport } from "../transport/transport.js";
import { createWebSocketTransport, webSocketLimitOptions } from "../transport/websocket-transport.js";
import { KeelRunner, type KeelRunnerOptions } from "./keel-runner.js";

/** Options of the action channel a runner serves on, besides its transport. */
export type RunnerChannelOptions = Omit<ActionChannelOptions, "transport">;

/**
 * Serves Keel agents as runners on one connection to a host (this process's stdio, say): the host lists the
 * runners and runs them, and the runs call back through the same connection.
 *
 * @example
 * const { channel } = serveKeelRunner({ runtime, agents: config.agents, transport: createStdioTransport({ input: process.stdin, output: process.stdout }) });
 * await channel.whenClosed();
 */
export function serveKeelRunner(
  options: KeelRunnerOptions & { transport: MessageTransport; channel?: RunnerChannelOptions },
): { runner: KeelRunner; channel: ActionChannel } {
  const runner = new KeelRunner(options);
  const channel = new ActionChannel({ ...options.channel, transport: options.transport });
  runner.serve(channel);
  return { runner, channel };
}

/** A runner listening for hosts over WebSocket. */
export interface KeelRunnerServer {
  /** Where hosts connect: `ws://host:port/path`, with the port it got when asked for port 0. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves Keel agents as runners to every host that connects over WebSocket at `url` (`ws://127.0.0.1:5400/
 * control/ws`, the plugin runtime's default address); each connection is its own channel.
 */
export async function listenKeelRunner(
  options: KeelRunnerOptions & { url: string; channel?: RunnerChannelOptions },
): Promise<KeelRunnerServer> {
  const address = new URL(options.url);
  const runner = new KeelRunner(options);
  const server = new WebSocketServer({
    host: address.hostname,
    port: Number(address.port || 80),
    path: address.pathname,
    ...webSocketLimitOptions(),
    // Results are small JSON frames sent one at a time: compressing each costs more time than the bytes it
    // saves on the links a runner is reached over, and adds a zlib pass to every result's latency.
    perMessageDeflate: false,
  });
  await once(server, "listening");
  const channels = new Set<ActionChannel>();
  server.on("connection", (socket) => {
    const channel = new ActionChannel({ ...options.channel, transport: createWebSocketTransport(socket) });
    channels.add(channel);
    void channel.whenClosed().then(() => channels.delete(channel));
    runner.serve(channel);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://${address.hostname}:${port}${address.pathname}`,
    close: async () => {
      await Promise.all([...channels].map((channel) => channel.close()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
