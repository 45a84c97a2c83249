/**
 * What one lone result costs on the host-runner path, both ends in one process, measured in CPU time and bytes
 * rather than wall time (which a shared machine makes meaningless). A runner channel serves a stream whose next
 * result is released only once the host has parsed the last one, so each result travels alone, as a paced result
 * of H1 does: runner's send (result → action frame → JSON → transport) and host's receive (transport → frame
 * parse → the stream's reader → `parseRunResult`). Not part of `npm run bench`; `npm run build` first.
 *
 *   node bench/h1-result-cost.mjs [ws|stdio] [dist folder]
 *
 * WebSocket: a `ws` server and client on loopback, the runner on the server side as `listenKeelRunner` is and the
 * host the client as `openWebSocket` makes it. Stdio: the two transports over a pair of PassThrough streams (no
 * pipe, so it is the transport's own work). Prints µs of CPU per result (median of 9 batches of 5,000) and bytes
 * allocated per result (a child with a young generation large enough that nothing is collected).
 */
import { execFile } from "node:child_process";
import { once } from "node:events";
import { PassThrough } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { WebSocket, WebSocketServer } from "ws";
import { allocatedBytes, noCollectionFlags } from "./measure.mjs";

const SELF = fileURLToPath(import.meta.url);
const args = process.argv.slice(2);
if (args[0] === "bytes-child") await bytesChild(args[1], args[2]);
else await main(args[0] ?? "ws", args[1] ?? "dist");

async function pair(keel, transport) {
  if (transport === "stdio") {
    const toHost = new PassThrough();
    const toRunner = new PassThrough();
    return {
      runner: keel.createStdioTransport({ input: toRunner, output: toHost }),
      host: keel.createStdioTransport({ input: toHost, output: toRunner }),
      dispose: async () => {},
    };
  }
  const maxPayload = keel.webSocketMaxPayload();
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, maxPayload });
  await once(server, "listening");
  const accepted = once(server, "connection");
  const client = new WebSocket(`ws://127.0.0.1:${server.address().port}`, {
    maxPayload,
    perMessageDeflate: false,
  });
  const [[serverSocket]] = await Promise.all([accepted, once(client, "open")]);
  return {
    runner: keel.createWebSocketTransport(serverSocket),
    host: keel.createWebSocketTransport(client),
    dispose: async () => {
      client.terminate();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** `read(n)` streams n lone results from runner to host and parses each; `close()` ends it all. */
async function lone(dist, transport) {
  const keel = await import(pathToFileURL(`${dist}/host/index.js`).href);
  const ends = await pair(keel, transport);
  const runner = new keel.ActionChannel({ transport: ends.runner });
  const host = new keel.ActionChannel({ transport: ends.host });
  let release;
  runner.handle("lone", async function* ({ count }) {
    for (let index = 1; index <= count; index++) {
      if (index > 1) await new Promise((resolve) => (release = resolve));
      // The shape of a streamed token: the plain `message.delta` the host reads without the schemas.
      yield {
        run_id: "bench",
        type: "message.delta",
        data: { chunk: { role: "assistant", content: "token " } },
        sequence: index,
        timestamp: 1_764_198_000,
      };
    }
  });
  const read = async (count) => {
    let seen = 0;
    for await (const raw of host.stream("lone", { count }, { timeoutMs: 60_000 })) {
      if (!keel.parseRunResult(raw).ok) throw new Error("a result did not parse");
      if (++seen < count) release();
    }
    if (seen !== count) throw new Error(`expected ${count} results, got ${seen}`);
  };
  const close = async () => {
    await host.close();
    await runner.close();
    await ends.dispose();
  };
  return { read, close };
}

async function main(transport, dist) {
  const { read, close } = await lone(dist, transport);
  await read(20_000);
  const samples = [];
  for (let batch = 0; batch < 9; batch++) {
    const start = process.cpuUsage();
    await read(5000);
    const used = process.cpuUsage(start);
    samples.push((used.user + used.system) / 5000);
  }
  await close();
  samples.sort((a, b) => a - b);
  const bytes = await new Promise((done, fail) =>
    execFile(
      process.execPath,
      [...noCollectionFlags(256), SELF, "bytes-child", transport, dist],
      (error, stdout) => (error ? fail(error) : done(JSON.parse(stdout))),
    ),
  );
  console.log(
    JSON.stringify({
      transport,
      cpuUsPerResult: Number(samples[4].toFixed(2)),
      bytesPerResult: bytes.collections === 0 ? Math.round(bytes.perResult) : null,
    }),
  );
}

async function bytesChild(transport, dist) {
  const { read, close } = await lone(dist, transport);
  await read(20_000);
  const { bytes, collections } = await allocatedBytes(() => read(10_000));
  await close();
  process.stdout.write(JSON.stringify({ perResult: bytes / 10_000, collections }));
}
