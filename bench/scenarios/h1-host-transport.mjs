// H1: what the host-runner transports cost between two processes. A child process serves results the way a
// runner does (one streamed `run_agent`-like call, each result an AgentRunResult `message.delta`); this process
// reads them as the host does (the action channel, then parseRunResult). Over stdio and over WebSocket:
//   resultsPerSecond  — one stream of N results read as fast as they come (median of repetitions);
//   usPerResult       — 10^6 / resultsPerSecond, the amortised cost of one result;
//   latencyUsMedian / latencyUsP99 — paced results (one a millisecond), time from the child's send to this
//                       process having parsed it, on one machine's clock.
// Goal: ≥ 50,000 results/s and ≤ 100 µs added per result. Run: `npm run build && node bench/scenarios/h1-host-transport.mjs`.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { WebSocket, WebSocketServer } from "ws";
import {
  ActionChannel,
  createStdioTransport,
  createWebSocketTransport,
  parseRunResult,
  webSocketMaxPayload,
} from "../../dist/host/index.js";

const here = fileURLToPath(import.meta.url);
const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

function serve(channel) {
  channel.handle("bench_results", async function* ({ count }) {
    for (let index = 1; index <= count; index++) {
      yield {
        run_id: "bench",
        type: "message.delta",
        data: { chunk: { role: "assistant", content: "token " } },
        sequence: index,
      };
    }
  });
  channel.handle("bench_paced", async function* ({ count }) {
    for (let index = 1; index <= count; index++) {
      // A millisecond apart, so that each result travels alone and none waits behind another.
      await new Promise((resolve) => setTimeout(resolve, 1));
      // The send time rides in the envelope's integer `timestamp` (µs here), so that a paced result has the shape
      // of a streamed one and is read the same way; a field of its own in `data` sent it through the schemas.
      yield {
        run_id: "bench",
        type: "message.delta",
        data: { chunk: { role: "assistant", content: "token" } },
        sequence: index,
        timestamp: Math.round(nowUs()),
      };
    }
  });
}

async function child(mode, url) {
  if (mode === "stdio") {
    const channel = new ActionChannel({
      transport: createStdioTransport({ input: process.stdin, output: process.stdout }),
    });
    serve(channel);
    await channel.whenClosed();
    return;
  }
  // As `openWebSocket` does: no permessage-deflate offered (the server would not take it either).
  const socket = new WebSocket(url, { maxPayload: webSocketMaxPayload(), perMessageDeflate: false });
  await once(socket, "open");
  const channel = new ActionChannel({ transport: createWebSocketTransport(socket) });
  serve(channel);
  // Tells the parent this end listens: a message sent before would find no listener.
  await channel.call("ready", {});
  await channel.whenClosed();
}

async function connect(mode) {
  if (mode === "stdio") {
    const process_ = spawn(process.execPath, [here, "--child", "stdio"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const channel = new ActionChannel({
      transport: createStdioTransport({ input: process_.stdout, output: process_.stdin }),
    });
    return {
      channel,
      stop: async () => {
        await channel.close();
        process_.kill();
      },
    };
  }
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, maxPayload: webSocketMaxPayload() });
  await once(server, "listening");
  const accepted = once(server, "connection");
  const process_ = spawn(
    process.execPath,
    [here, "--child", "ws", `ws://127.0.0.1:${server.address().port}`],
    { stdio: "inherit" },
  );
  const [socket] = await accepted;
  const channel = new ActionChannel({ transport: createWebSocketTransport(socket) });
  await new Promise((resolve) =>
    channel.handle("ready", async () => {
      resolve();
      return {};
    }),
  );
  return {
    channel,
    stop: async () => {
      await channel.close();
      process_.kill();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percentile = (values, p) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

async function measure(mode, { count, paced, repetitions }) {
  const { channel, stop } = await connect(mode);
  try {
    const read = async (action, n, onResult) => {
      let seen = 0;
      for await (const raw of channel.stream(action, { count: n }, { timeoutMs: 60_000 })) {
        const parsed = parseRunResult(raw);
        if (!parsed.ok || parsed.result?.type !== "message.delta") throw new Error("bad result");
        onResult?.(raw);
        seen++;
      }
      if (seen !== n) throw new Error(`expected ${n} results, got ${seen}`);
    };
    await read("bench_results", 5_000); // warm-up
    const rates = [];
    for (let repetition = 0; repetition < repetitions; repetition++) {
      const started = performance.now();
      await read("bench_results", count);
      rates.push(count / ((performance.now() - started) / 1000));
    }
    const latencies = [];
    await read("bench_paced", paced, (raw) => latencies.push(nowUs() - raw.timestamp));
    const resultsPerSecond = Math.round(median(rates));
    return {
      scenario: "H1",
      transport: mode,
      results: count,
      resultsPerSecond,
      usPerResult: Number((1e6 / resultsPerSecond).toFixed(2)),
      latencyUsMedian: Math.round(median(latencies)),
      latencyUsP99: Math.round(percentile(latencies, 0.99)),
      pacedResults: paced,
    };
  } finally {
    await stop();
  }
}

/** The H1 figures, one object per transport. */
export async function h1HostTransport({ quick = false } = {}) {
  const options = { count: quick ? 20_000 : 200_000, paced: quick ? 300 : 2_000, repetitions: quick ? 1 : 5 };
  return [await measure("stdio", options), await measure("ws", options)];
}

if (process.argv[2] === "--child") {
  await child(process.argv[3], process.argv[4]);
} else if (process.argv[1] === here) {
  for (const line of await h1HostTransport({ quick: process.argv.includes("--quick") }))
    console.log(JSON.stringify(line));
}
