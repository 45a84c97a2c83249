/**
 * S6 server: Keel's runs API served by `serveKeel` on loopback, N clients following one run's SSE stream
 * (`GET /runs/:id/events`). The run first waits on a gate tool, so every client is attached before the events
 * flow; then one model call streams thousands of text deltas. Figures: events delivered per second over all
 * clients, memory per attached client, and a reconnect storm in which every client drops midway and re-attaches
 * with `Last-Event-ID`, after which each client's ids must be exactly 1..last.
 */
import http from "node:http";
import { createParser } from "eventsource-parser";
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

/**
 * One SSE client of a run. It records every id it gets, in order; `dropAt` makes it abort its request once it
 * has seen that id and re-attach at once with `Last-Event-ID`, as a browser's EventSource does after a drop.
 */
class SseClient {
  constructor(server, runId, dropAt = Number.POSITIVE_INFINITY) {
    this.url = `${server.url}/runs/${runId}/events`;
    this.dropAt = dropAt;
    this.ids = [];
    this.lastId = 0;
    this.finished = false;
    this.attached = false;
    this.reconnects = 0;
    this.error = null;
  }

  connect() {
    const headers = { accept: "text/event-stream" };
    if (this.lastId > 0) headers["last-event-id"] = String(this.lastId);
    let dropped = false;
    const request = http.get(this.url, { headers, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        this.error = new Error(`events answered ${response.statusCode}`);
        response.resume();
        return;
      }
      response.setEncoding("utf8");
      const parser = createParser({
        onEvent: (event) => {
          if (dropped) return;
          this.attached = true;
          const id = Number(event.id);
          this.ids.push(id);
          this.lastId = id;
          if (event.event === "run.finished") this.finished = true;
          else if (id >= this.dropAt) {
            dropped = true;
            this.dropAt = Number.POSITIVE_INFINITY;
            request.destroy();
            this.reconnects++;
            this.connect();
          }
        },
      });
      response.on("data", (text) => {
        if (!dropped) parser.feed(text);
      });
      response.on("error", () => {});
    });
    request.on("error", (error) => {
      if (!dropped && !this.finished) this.error = error;
    });
  }
}

/** Ids missing from 1..last and ids seen more than once, over one client's list. */
function gapsAndRepeats(ids) {
  const last = ids.length === 0 ? 0 : Math.max(...ids);
  const seen = new Uint8Array(last + 1);
  let duplicated = 0;
  for (const id of ids) {
    if (seen[id] === 1) duplicated++;
    seen[id] = 1;
  }
  let lost = 0;
  for (let id = 1; id <= last; id++) if (seen[id] === 0) lost++;
  return { lost, duplicated, last };
}

/** Start a gated run, attach `clients` followers, and wait until each has its first events. */
async function attachedRun(setup, clients, dropAt) {
  const { server, gate } = setup;
  const waitingBefore = gate.waiting();
  const started = await postJson(server, "/runs", { agentId: AGENT_ID, inputText: "Stream." });
  check(started.status === 202, `POST /runs answered ${started.status}`);
  await waitUntil(() => gate.waiting() > waitingBefore, 30_000, "the run to reach its gate");
  const followers = [];
  for (let index = 0; index < clients; index++) {
    const client = new SseClient(server, started.body.runId, dropAt);
    client.connect();
    followers.push(client);
  }
  await waitUntil(
    () => followers.every((client) => client.attached || client.error !== null),
    120_000,
    "every client to attach",
  );
  for (const client of followers) if (client.error !== null) throw client.error;
  return followers;
}

/** Open the gate and time until every client has its `run.finished`. */
async function follow(setup, followers) {
  const before = followers.reduce((sum, client) => sum + client.ids.length, 0);
  const start = now();
  setup.gate.open();
  await waitUntil(
    () => followers.every((client) => client.finished || client.error !== null),
    600_000,
    "every client to get run.finished",
  );
  const wallMs = now() - start;
  for (const client of followers) if (client.error !== null) throw client.error;
  const events = followers.reduce((sum, client) => sum + client.ids.length, 0) - before;
  return { wallMs, events, eventsPerSecond: Math.round((events * 1000) / wallMs) };
}

async function throughput(setup, clients) {
  await fullGc();
  const baseline = process.memoryUsage();
  const followers = await attachedRun(setup, clients);
  await fullGc();
  const attached = process.memoryUsage();
  const figures = await follow(setup, followers);
  for (const client of followers) {
    const { lost, duplicated } = gapsAndRepeats(client.ids);
    check(lost === 0 && duplicated === 0, `a client lost ${lost} and duplicated ${duplicated} events`);
  }
  return {
    scenario: "S6",
    impl: "keel",
    clients,
    eventsPerSecond: figures.eventsPerSecond,
    events: figures.events,
    eventsPerClient: followers[0].ids.length,
    wallMs: round(figures.wallMs, 1),
    // With a handful of clients the difference is smaller than the heap's and the RSS's own drift.
    heapBytesPerClient: clients < 50 ? null : Math.round((attached.heapUsed - baseline.heapUsed) / clients),
    rssBytesPerClient: clients < 50 ? null : Math.round((attached.rss - baseline.rss) / clients),
  };
}

async function storm(setup, clients) {
  // The drop comes in the middle of the deltas: run.started and the gate's events come first.
  const followers = await attachedRun(setup, clients, Math.round(DELTAS / 2));
  const figures = await follow(setup, followers);
  let lost = 0;
  let duplicated = 0;
  let last = 0;
  for (const client of followers) {
    const counts = gapsAndRepeats(client.ids);
    lost += counts.lost;
    duplicated += counts.duplicated;
    last = Math.max(last, counts.last);
  }
  // A client that ends short of the run's last event lost the events after its own last one.
  for (const client of followers) lost += last - gapsAndRepeats(client.ids).last;
  const reconnects = followers.reduce((sum, client) => sum + client.reconnects, 0);
  check(reconnects === clients, `${reconnects} reconnects for ${clients} clients`);
  return {
    scenario: "S6",
    impl: "keel",
    storm: true,
    clients,
    reconnects,
    lost,
    duplicated,
    eventsPerSecond: figures.eventsPerSecond,
    events: figures.events,
    wallMs: round(figures.wallMs, 1),
  };
}

export async function s6Server({ quick, log }) {
  const gate = createGate();
  const runtime = await createKeelRuntime({ model: createGatedDeltaModel(), tools: [gate.tool] });
  const server = await serveKeel(runtime, { port: 0, heartbeatSeconds: 60 });
  const setup = { server, gate };
  const lines = [];
  try {
    // Warm-up: the server's routes, the runtime and the parser compiled before anything is timed.
    await follow(setup, await attachedRun(setup, 10));
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
    await server.close();
    await runtime.close();
  }
  return lines;
}
