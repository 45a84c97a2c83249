/**
 * What one run holds, as a tree: `node --expose-gc bench/run-heap-tree.mjs [parked|finished] [N] [depth]`
 * parks N S3 runs (default 1,000; `finished`: lets them finish too) and walks, in a heap snapshot, everything new
 * since before the runs that one of them reaches from its anchors: the parked tool's resolver and the run's
 * promise (parked), or its record, event log, session and transcript in the store (finished). Each object is
 * counted once, under the first path that reached it; rows are its bytes with all it alone leads to. Objects
 * bigger than 16 KiB are shared tables (maps of all runs), not walked. Needs a build in dist/.
 */
import { openParkingRuntime, takeHeapSnapshot } from "./parking-runtime.mjs";

const mode = process.argv[2] ?? "parked";
const n = Number(process.argv[3] ?? 1000);
const maxDepth = Number(process.argv[4] ?? 14);
const { runtime, parking, park, release } = await openParkingRuntime();

class RunHeapAnchor {
  constructor(values) {
    Object.assign(this, values);
  }
}

for (let round = 0; round < 2; round++) {
  const warm = await park(200, `warm${round}`);
  release();
  await Promise.all(warm);
}
const baseline = takeHeapSnapshot();
const known = new Set();
{
  const fields = baseline.snapshot.meta.node_fields.length;
  const idAt = baseline.snapshot.meta.node_fields.indexOf("id");
  for (let at = 0; at < baseline.nodes.length; at += fields) known.add(baseline.nodes[at + idAt]);
}
const parked = await park(n, "run");
const pick = n >> 1;
let anchor;
if (mode === "parked") {
  anchor = new RunHeapAnchor({ resolver: parking.resolvers[pick], done: parked[pick] });
  globalThis.runHeapAnchor = anchor;
} else {
  release();
  const results = await Promise.all(parked);
  const store = runtime.sessionManager;
  const runId = results[pick].runId;
  anchor = new RunHeapAnchor({ runId, results: null });
  globalThis.runHeapAnchor = anchor;
  results.length = 0;
  parked.length = 0;
  anchor.store = store;
}
const snap = takeHeapSnapshot();

const meta = snap.snapshot.meta;
const nf = meta.node_fields.length;
const ef = meta.edge_fields.length;
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const [typeAt, nameAt, idAt, sizeAt, edgesAt] = ["type", "name", "id", "self_size", "edge_count"].map((f) =>
  meta.node_fields.indexOf(f),
);
const [etAt, enAt, toAt] = ["type", "name_or_index", "to_node"].map((f) => meta.edge_fields.indexOf(f));
const { nodes, edges, strings } = snap;
const count = nodes.length / nf;
const firstEdge = new Uint32Array(count + 1);
for (let node = 0, edge = 0; node < count; node++) {
  firstEdge[node] = edge;
  edge += nodes[node * nf + edgesAt] * ef;
}
firstEdge[count] = edges.length;
const label = (node) => {
  const type = nodeTypes[nodes[node * nf + typeAt]];
  let name = strings[nodes[node * nf + nameAt]];
  if (type.endsWith("string")) name = JSON.stringify(name.slice(0, 30));
  if (name === "system / Context") {
    // A closure's context: the names of the variables it keeps say which function it belongs to.
    const names = [];
    for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += ef)
      if (edgeTypes[edges[edge + etAt]] === "context") names.push(strings[edges[edge + enAt]]);
    name += ` {${names.join(",")}}`;
  }
  return `${type}:${name.slice(0, 90)}`;
};
const edgeLabel = (edge) => {
  const type = edgeTypes[edges[edge + etAt]];
  return type === "element" || type === "hidden" ? `[${edges[edge + enAt]}]` : strings[edges[edge + enAt]];
};
let start = -1;
for (let node = 0; node < count; node++)
  if (
    strings[nodes[node * nf + nameAt]] === "RunHeapAnchor" &&
    nodeTypes[nodes[node * nf + typeAt]] === "object"
  )
    start = node;
if (start < 0) throw new Error("anchor not found");

// Finished runs: their store entries are found by the run id, walking the store's maps for values keyed by it.
const parent = new Int32Array(count).fill(-2);
const via = new Array(count);
const queue = [start];
parent[start] = -1;
const skipNames = new Set(["store", "runId"]);
const queueLinks = new Set(["prev", "next", "generatedIdle"]);
// Shapes and code are shared by every run (made again only because the warm-up's went with their objects).
const shared = (node) => {
  const type = nodeTypes[nodes[node * nf + typeAt]];
  return type === "object shape" || type === "code" || strings[nodes[node * nf + nameAt]] === "system / Map";
};
for (let head = 0; head < queue.length; head++) {
  const node = queue[head];
  for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += ef) {
    const type = edgeTypes[edges[edge + etAt]];
    if (type === "weak" || type === "shortcut") continue;
    if (node === start && skipNames.has(edgeLabel(edge))) continue;
    const to = edges[edge + toAt] / nf;
    if (parent[to] !== -2) continue;
    if (known.has(nodes[to * nf + idAt]) || shared(to)) continue;
    if (nodes[to * nf + sizeAt] > 16384) continue;
    parent[to] = node;
    via[to] = edgeLabel(edge);
    queue.push(to);
  }
}
if (mode !== "parked") {
  // A finished run: what the store holds for its id, found as entries of the store's maps.
  const runIdNode = (() => {
    for (let edge = firstEdge[start]; edge < firstEdge[start + 1]; edge += ef)
      if (edgeLabel(edge) === "runId") return edges[edge + toAt] / nf;
    return -1;
  })();
  const runIdText = strings[nodes[runIdNode * nf + nameAt]];
  const sessionText = `run-${pick}`;
  // Hash table entries: a key string followed by its value in a map's backing store.
  for (let node = 0; node < count; node++) {
    const name = strings[nodes[node * nf + nameAt]];
    if (nodeTypes[nodes[node * nf + typeAt]] !== "array" && !name.includes("Map")) continue;
    let previous = -1;
    for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += ef) {
      const to = edges[edge + toAt] / nf;
      const toName = strings[nodes[previous * nf + nameAt]];
      if (
        previous >= 0 &&
        nodeTypes[nodes[previous * nf + typeAt]].endsWith("string") &&
        (toName === runIdText || toName === sessionText) &&
        parent[to] === -2 &&
        !known.has(nodes[to * nf + idAt])
      ) {
        parent[to] = start;
        via[to] = `${label(node)}[${toName.slice(0, 12)}]`;
        queue.push(to);
      }
      previous = to;
    }
  }
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head];
    for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += ef) {
      const type = edgeTypes[edges[edge + etAt]];
      if (type === "weak" || type === "shortcut") continue;
      // The store's retention queues thread every run through `prev`/`next`: other runs, not this one's.
      if (type === "property" && queueLinks.has(edgeLabel(edge))) continue;
      const to = edges[edge + toAt] / nf;
      if (parent[to] !== -2 || known.has(nodes[to * nf + idAt]) || shared(to)) continue;
      if (nodes[to * nf + sizeAt] > 16384) continue;
      parent[to] = node;
      via[to] = edgeLabel(edge);
      queue.push(to);
    }
  }
}
const total = new Float64Array(count);
const children = new Map();
for (let index = queue.length - 1; index > 0; index--) {
  const node = queue[index];
  total[node] += nodes[node * nf + sizeAt];
  total[parent[node]] += total[node];
  const list = children.get(parent[node]) ?? [];
  list.push(node);
  children.set(parent[node], list);
}
console.log(
  `${mode}: ${total[start]} bytes reached from one run's anchors (N = ${n}), ${queue.length - 1} objects`,
);
const print = (node, depth) => {
  const list = (children.get(node) ?? []).sort((a, b) => total[b] - total[a]);
  for (const child of list) {
    if (total[child] < 40) continue;
    console.log(`${String(total[child]).padStart(6)} ${"  ".repeat(depth)}${via[child]} → ${label(child)}`);
    if (depth < maxDepth) print(child, depth + 1);
  }
};
print(start, 0);
delete globalThis.runHeapAnchor;
release();
await Promise.all(parked);
await runtime.close();
