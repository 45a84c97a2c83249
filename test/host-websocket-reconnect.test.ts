import { once } from "node:events";
import { type AddressInfo, createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { appConfigSchema } from "../src/config/app-config-schema.js";
import { type AttachedRuntime, type KeelRunnerServer, listenKeelRunner } from "../src/host/index.js";
import { reconnectDelayMs, reconnectPolicyOf } from "../src/host/transport/reconnect-policy.js";
import { Runtime } from "../src/index.js";
import {
  binding,
  collect,
  createTestHost,
  HOST_RUNNER_CONFIG,
  message,
  typesOf,
} from "./support/host-scenario.js";

/**
 * The host is the side that connects, so it is the side that reconnects: a dropped WebSocket fails the runs on
 * it at once, retryably, and after a jittered backoff the host is back and new runs work — through a TCP proxy
 * that cuts the connection, and against a runner whose server stops and starts again on the same port.
 */

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const FAST = { initialDelayMs: 5, maxDelayMs: 40 };

async function startRunner(port = 0): Promise<KeelRunnerServer> {
  const runtime = await Runtime.fromDict(HOST_RUNNER_CONFIG);
  const server = await listenKeelRunner({
    runtime,
    agents: appConfigSchema().parse(HOST_RUNNER_CONFIG).agents,
    url: `ws://127.0.0.1:${port}/control/ws`,
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.close();
    await runtime.close();
  };
  closers.push(close);
  return { url: server.url, close };
}

/** A TCP proxy in front of a port: every connection piped through, and all of them cut on demand. */
async function startProxy(targetPort: number) {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((client) => {
    accepted++;
    const upstream = tcpConnect(targetPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => accepted,
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

function reconnects() {
  let count = 0;
  return { count: () => count, onReconnect: () => void count++ };
}

describe("WebSocket reconnect", () => {
  it("fails the run on a cut connection at once, reconnects through the proxy, and runs again", async () => {
    const runner = await startRunner();
    const proxy = await startProxy(Number(new URL(runner.url).port));
    const { host } = createTestHost();
    closers.push(() => host.close());
    const counter = reconnects();
    const runtime = await host.attachWebSocket(`ws://127.0.0.1:${proxy.port}/control/ws`, {
      reconnect: FAST,
      onReconnect: counter.onReconnect,
    });
    const first = runtime.channel;

    const running = collect(host.run(message("hang on"), binding()));
    await expect.poll(() => host.activeRuns().length).toBe(1);
    proxy.cut();
    const results = await running;
    expect(results.at(-1)).toMatchObject({
      type: "run.failed",
      data: { code: "runner.channel_lost", retryable: true },
    });
    expect(host.activeRuns()).toEqual([]);

    await expect.poll(() => counter.count()).toBe(1);
    expect(runtime.channel).not.toBe(first);
    expect(proxy.accepted()).toBe(2);
    expect(host.listRunners().map((entry) => entry.channel)).toEqual([runtime.channel]);
    const after = await collect(host.run(message("please lookup keel"), binding()));
    expect(typesOf(after).at(-1)).toBe("run.completed");

    // A second cut is survived the same way.
    proxy.cut();
    await expect.poll(() => counter.count()).toBe(2);
    const again = await collect(host.run(message("hello"), binding()));
    expect(typesOf(again).at(-1)).toBe("run.completed");
  });

  it("fails a run started while the runtime is away, retryably, and reconnects once its server is back", async () => {
    const runner = await startRunner();
    const port = Number(new URL(runner.url).port);
    const { host } = createTestHost();
    closers.push(() => host.close());
    const counter = reconnects();
    const runtime: AttachedRuntime = await host.attachWebSocket(runner.url, {
      reconnect: FAST,
      onReconnect: counter.onReconnect,
    });

    const running = collect(host.run(message("hang on"), binding()));
    await expect.poll(() => host.activeRuns().length).toBe(1);
    await runner.close();
    expect((await running).at(-1)).toMatchObject({
      type: "run.failed",
      data: { code: "runner.channel_lost", retryable: true },
    });
    expect(runtime.channel.closed).toBe(true);

    const meanwhile = await collect(host.run(message("hello"), binding()));
    expect(meanwhile.at(-1)).toMatchObject({
      type: "run.failed",
      data: { code: "runner.channel_lost", retryable: true },
    });
    expect(host.activeRuns()).toEqual([]);

    await startRunner(port);
    await expect.poll(() => counter.count(), { timeout: 5_000 }).toBe(1);
    const after = await collect(host.run(message("please lookup keel"), binding()));
    expect(typesOf(after).at(-1)).toBe("run.completed");
  });

  it("gives up after maxAttempts and forgets the runtime's runners", async () => {
    const runner = await startRunner();
    const { host, warnings } = createTestHost();
    closers.push(() => host.close());
    await host.attachWebSocket(runner.url, { reconnect: { ...FAST, maxAttempts: 2 } });
    expect(host.listRunners()).toHaveLength(1);
    await runner.close();
    await expect.poll(() => host.listRunners().length).toBe(0);
    expect(warnings.some((text) => text.includes("gave up reconnecting after 2 attempts"))).toBe(true);
    const after = await collect(host.run(message("hello"), binding()));
    expect(after.at(-1)).toMatchObject({ type: "run.failed", data: { code: "runner.not_found" } });
  });

  it("with reconnect: false, a drop is final", async () => {
    const runner = await startRunner();
    const proxy = await startProxy(Number(new URL(runner.url).port));
    const { host } = createTestHost();
    closers.push(() => host.close());
    await host.attachWebSocket(`ws://127.0.0.1:${proxy.port}/control/ws`, { reconnect: false });
    proxy.cut();
    await expect.poll(() => host.listRunners().length).toBe(0);
    expect(proxy.accepted()).toBe(1);
  });

  it("stops reconnecting when the host closes", async () => {
    const runner = await startRunner();
    const port = Number(new URL(runner.url).port);
    const { host } = createTestHost();
    const counter = reconnects();
    await host.attachWebSocket(runner.url, { reconnect: FAST, onReconnect: counter.onReconnect });
    await runner.close();
    await host.close();
    await startRunner(port);
    // Long enough for several backoff rounds had the host kept trying; it must not have.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(counter.count()).toBe(0);
    expect(host.listRunners()).toEqual([]);
  });
});

describe("reconnect backoff", () => {
  const policy = reconnectPolicyOf({ initialDelayMs: 100, maxDelayMs: 1_000, jitter: 0.5 });

  it("doubles from the first delay up to the cap", () => {
    const noJitter = () => 0;
    expect([1, 2, 3, 4, 5, 6, 40].map((attempt) => reconnectDelayMs(attempt, policy, noJitter))).toEqual([
      100, 200, 400, 800, 1_000, 1_000, 1_000,
    ]);
  });

  it("takes a random share of up to `jitter` off each delay, never more", () => {
    expect(reconnectDelayMs(3, policy, () => 1)).toBe(200);
    expect(reconnectDelayMs(3, policy, () => 0.5)).toBe(300);
    for (let attempt = 1; attempt < 20; attempt++) {
      const delay = reconnectDelayMs(attempt, policy);
      expect(delay).toBeGreaterThanOrEqual(50);
      expect(delay).toBeLessThanOrEqual(1_000);
    }
  });

  it("refuses a nonsensical policy with a typed error", () => {
    expect(() => reconnectPolicyOf({ jitter: 2 })).toThrow(/reconnect\.jitter/);
    expect(() => reconnectPolicyOf({ maxDelayMs: -1 })).toThrow(
      expect.objectContaining({ code: "config.error" }),
    );
  });
});
