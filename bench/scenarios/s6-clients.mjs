/**
 * The S6 clients, run in a child process of their own so that the server's figures are the server's: the
 * clients' parsing and bookkeeping no longer share its event loop. The parent sends `attach` (a run id and how
 * many followers); this process answers `attached` once each follower has its first event and `finished` once
 * each has `run.finished`, with the counts the parent reports. Everything is event-driven: no polling loop
 * competes with the server for the machine's cores.
 */
import http from "node:http";
import { createParser } from "eventsource-parser";

/**
 * One SSE follower of a run. It records every id it gets, in order; `dropAt` makes it abort its request once it
 * has seen that id and re-attach at once with `Last-Event-ID`, as a browser's EventSource does after a drop.
 */
class SseClient {
  constructor(url, dropAt, group) {
    this.url = url;
    this.dropAt = dropAt;
    this.group = group;
    this.ids = [];
    this.lastId = 0;
    this.finished = false;
    this.attached = false;
    this.reconnects = 0;
  }

  connect() {
    const headers = { accept: "text/event-stream" };
    if (this.lastId > 0) headers["last-event-id"] = String(this.lastId);
    let dropped = false;
    const request = http.get(this.url, { headers, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        this.group.fail(new Error(`events answered ${response.statusCode}`));
        return;
      }
      response.setEncoding("utf8");
      const parser = createParser({
        onEvent: (event) => {
          if (dropped) return;
          const id = Number(event.id);
          this.ids.push(id);
          this.lastId = id;
          if (!this.attached) {
            this.attached = true;
            this.group.onAttached();
          }
          if (event.event === "run.finished") {
            this.finished = true;
            this.group.onFinished();
          } else if (id >= this.dropAt) {
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
      if (!dropped && !this.finished) this.group.fail(error);
    });
  }
}

/** Ids missing from 1..last and ids seen more than once, over one client's list. */
function gapsAndRepeats(ids) {
  let last = 0;
  for (const id of ids) if (id > last) last = id;
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

/** The followers of one run and the two moments the parent waits for. */
class ClientGroup {
  constructor({ url, runId, clients, dropAt }) {
    this.attachedCount = 0;
    this.finishedCount = 0;
    this.failed = false;
    this.eventsAtAttach = 0;
    const eventsUrl = `${url}/runs/${runId}/events`;
    this.clients = Array.from(
      { length: clients },
      () => new SseClient(eventsUrl, dropAt ?? Number.POSITIVE_INFINITY, this),
    );
    for (const client of this.clients) client.connect();
  }

  events() {
    let total = 0;
    for (const client of this.clients) total += client.ids.length;
    return total;
  }

  onAttached() {
    if (++this.attachedCount === this.clients.length) {
      this.eventsAtAttach = this.events();
      process.send({ type: "attached" });
    }
  }

  onFinished() {
    if (++this.finishedCount < this.clients.length) return;
    let lost = 0;
    let duplicated = 0;
    let last = 0;
    const counts = this.clients.map((client) => gapsAndRepeats(client.ids));
    for (const count of counts) {
      lost += count.lost;
      duplicated += count.duplicated;
      last = Math.max(last, count.last);
    }
    // A client that ends short of the run's last event lost the events after its own last one.
    for (const count of counts) lost += last - count.last;
    process.send({
      type: "finished",
      events: this.events() - this.eventsAtAttach,
      eventsPerClient: this.clients[0].ids.length,
      lost,
      duplicated,
      reconnects: this.clients.reduce((sum, client) => sum + client.reconnects, 0),
    });
  }

  fail(error) {
    if (this.failed) return;
    this.failed = true;
    process.send({ type: "error", message: String(error?.message ?? error) });
  }
}

process.on("message", (message) => {
  if (message.type === "attach") new ClientGroup(message);
  else if (message.type === "exit") process.exit(0);
});
