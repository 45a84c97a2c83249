/**
 * S6 server: Keel's runs API served by `serveKeel` on loopback, N clients following one run's SSE stream
 * (`GET /runs/:id/events`). The run first waits on a gate tool, so every client is attached before the events
 * flow; then one model call streams thousands of text deltas. The clients run in a child process of their own
 * (s6-clients.mjs), so the server has the event loop to itself as it would in production. Figures: events
 * delivered per second over all clients, the server's memory per attached client, and a reconnect storm in
 * which every client drops midway and re-attaches with `Last-Event-ID`, after which each client's ids must be
 * exactly 1..last.
 */
import { fork } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { serveKeel } from "../../dist/server/index.js";
import { AGENT_ID, createKeelRuntime, keelTool } from "../keel-runtime.mjs";
import { check, fullGc, now, round, waitUntil } from "../measure.mjs";
import { MODEL_SPECIFICATION_VERSION, PartsStream } from "../models.mjs";

const DELTAS = 2000;
const USAGE = Object.freeze({ type: "usage", usage: Object.freeze({ inputTokens: 10, outputTokens: 5 }) });

/** First call: the gate tool; once it has answered, `DELTAS` text deltas. Decides from the request alone. */
function createGatedDeltaModel() {
  const gateParts = Object.freeze([
    Object.freeze({ type: "tool-call", id: "call_gate", name: "gate", arguments: {} }),
    USAGE,
    Object.freeze({ type: "finish", stopReason: "tool_use", model: "bench-gated" }),
  ]);
  const deltaParts = [];
  for (let index = 0; index < DELTAS; index++)
    deltaParts.push(Object.freeze({ type: "text-delta", text: `w${index % 10} ` }));
  deltaParts.push(USAGE, Object.freeze({ type: "finish", stopReason: "end_turn", model: "bench-gated" }));
  Object.freeze(deltaParts);
  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    provider: "bench",
    modelId: "bench-gated",
    stream(request) {
      const last = request.messages[request.messages.length - 1];
      return new PartsStream(last !== undefined && last.role === "tool" ? deltaParts : gateParts);
    },
  };
}

/** A gate tool whose calls wait until the benchmark opens the gate; `open()` releases every waiting call. */
function createGate() {
  let waiting = [];
  const gate = {
    waiting: () => waiting.length,
    open() {
      for (const resolve of waiting) resolve({ opened: true });
      waiting = [];
    },
    tool: keelTool(
      "gate",
      () =>
        new Promise((resolve) => {
          waiting.push(resolve);
        }),
      { type: "object", properties: {} },
    ),
  };
  return gate;
}

function postJson(server, path, body) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${server.url}${path}`,
      { method: "POST", headers: { "content-type": "application/json" } },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (part) => {
          text += part;
        });
        response.on("end", () => resolve({ status: response.statusCode, body: JSON.parse(text) }));
      },
    );
    request.once("error", reject);
    request.end(JSON.stringify(body));
  });
}

/** The clients' child process, and a way to wait for its next message of one type. */
function startClientProcess() {
  const child = fork(fileURLToPath(new URL("./s6-clients.mjs", import.meta.url)), [], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = (type) =>
    new Promise((resolve, reject) => {
      const onMessage = (message) => {
        if (message.type === type) {
          child.off("message", onMessage);
          resolve(message);
        } else if (message.type === "error") {
          child.off("message", onMessage);
          reject(new Error(`S6 clients: ${message.message}`));
        }
      };
      child.on("message", onMessage);
    });
  return { child, next };
}

/** Start a gated run and attach `clients` followers in the clients' process; resolves once each has its first events. */
async function attachedRun(setup, clients, dropAt) {
  const { server, gate, clientProcess } = setup;
  const waitingBefore = gate.waiting();
  const started = await postJson(server, "/runs", { agentId: AGENT_ID, inputText: "Stream." });
  check(started.status === 202, `POST /runs answered ${started.status}`);
  await waitUntil(() => gate.waiting() > waitingBefore, 30_000, "the run to reach its gate");
  const attached = clientProcess.next("attached");
  clientProcess.child.send({ type: "attach", url: server.url, runId: started.body.runId, clients, dropAt });
  await attached;
}

/** Open the gate and time until every client has its `run.finished`. */
async function follow(setup) {
  const finished = setup.clientProcess.next("finished");
  const start = now();
  setup.gate.open();
  const counts = await finished;
  const wallMs = now() - start;
  return { ...counts, wallMs, eventsPerSecond: Math.round((counts.events * 1000) / wallMs) };
}

async function throughput(setup, clients) {
  await fullGc();
  const baseline = process.memoryUsage();
  await attachedRun(setup, clients);
  await fullGc();
  const attached = process.memoryUsage();
  const figures = await follow(setup);
  check(
    figures.lost === 0 && figures.duplicated === 0,
    `clients lost ${figures.lost} and duplicated ${figures.duplicated} events`,
  );
  return {
    scenario: "S6",
    impl: "keel",
    clients,
    eventsPerSecond: figures.eventsPerSecond,
    events: figures.events,
    eventsPerClient: figures.eventsPerClient,
    wallMs: round(figures.wallMs, 1),
    // The server's own memory: the clients live in another process. With a handful of clients the difference
    // is smaller than the heap's and the RSS's own drift.
    heapBytesPerClient: clients < 50 ? null : Math.round((attached.heapUsed - baseline.heapUsed) / clients),
    rssBytesPerClient: clients < 50 ? null : Math.round((attached.rss - baseline.rss) / clients),
  };
}

async function storm(setup, clients) {
  // The drop comes in the middle of the deltas: run.started and the gate's events come first.
  await attachedRun(setup, clients, Math.round(DELTAS / 2));
  const figures = await follow(setup);
  check(figures.reconnects === clients, `${figures.reconnects} reconnects for ${clients} clients`);
  return {
    scenario: "S6",
    impl: "keel",
    storm: true,
    clients,
    reconnects: figures.reconnects,
    lost: figures.lost,
    duplicated: figures.duplicated,
    eventsPerSecond: figures.eventsPerSecond,
    events: figures.events,
    wallMs: round(figures.wallMs, 1),
  };
}

export async function s6Server({ quick, log }) {
  const gate = createGate();
  const runtime = await createKeelRuntime({ model: createGatedDeltaModel(), tools: [gate.tool] });
  const server = await serveKeel(runtime, { port: 0, heartbeatSeconds: 60 });
  const clientProcess = startClientProcess();
  const setup = { server, gate, clientProcess };
  const lines = [];
  try {
    // Warm-up: the server's routes, the runtime and the parser compiled before anything is timed.
    await attachedRun(setup, 10);
    await follow(setup);
    for (const clients of quick ? [1, 50] : [1, 100, 1000]) {
      const line = await throughput(setup, clients);
      log(
        `  ${clients} clients: ${line.eventsPerSecond} events/s, ${line.heapBytesPerClient} heap B/client, ${line.rssBytesPerClient} rss B/client`,
      );
      lines.push(line);
    }
    const line = await storm(setup, quick ? 50 : 1000);
    log(`  storm ${line.clients} clients: lost ${line.lost}, duplicated ${line.duplicated}`);
    lines.push(line);
  } finally {
    clientProcess.child.kill();
    await server.close();
    await runtime.close();
  }
  return lines;
}
