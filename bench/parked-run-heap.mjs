/**
 * Where a parked run's heap goes: `node --expose-gc bench/parked-run-heap.mjs [N]` parks N S3 runs (default
 * 2,000) and prints what is new on the heap per run, by kind of object, with what holds arrays, closures,
 * contexts and promises, and which async functions are suspended (`Generator fn=`). It takes three heap snapshots
 * (tens of MB each) and compares them; the figures are per run, and a row's count says how many such objects a
 * run adds. Needs a build in dist/.
 */
import { openParkingRuntime, takeHeapSnapshot } from "./parking-runtime.mjs";

const n = Number(process.argv[2] ?? 2000);
const { runtime, park, release } = await openParkingRuntime();

/** Totals by row key; with `known`, objects whose ids it holds keep a plain key and new ones a detailed one. */
function summarize(snap, known) {
  const meta = snap.snapshot.meta;
  const nodeFields = meta.node_fields.length;
  const edgeFields = meta.edge_fields.length;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const [typeAt, nameAt, idAt, sizeAt, edgesAt] = ["type", "name", "id", "self_size", "edge_count"].map(
    (field) => meta.node_fields.indexOf(field),
  );
  const [edgeTypeAt, edgeNameAt, edgeToAt] = ["type", "name_or_index", "to_node"].map((field) =>
    meta.edge_fields.indexOf(field),
  );
  const { nodes, edges, strings } = snap;
  const firstEdge = new Uint32Array(nodes.length / nodeFields + 1);
  const retainer = new Map();
  for (let node = 0, edge = 0; node < nodes.length / nodeFields; node++) {
    firstEdge[node] = edge;
    const count = nodes[node * nodeFields + edgesAt];
    for (let index = 0; index < count; index++, edge += edgeFields) {
      const type = edgeTypes[edges[edge + edgeTypeAt]];
      if (type === "weak") continue;
      const to = edges[edge + edgeToAt];
      const label =
        type === "element" || type === "hidden"
          ? `#${edges[edge + edgeNameAt]}`
          : strings[edges[edge + edgeNameAt]];
      if (!retainer.has(to))
        retainer.set(
          to,
          `${nodeTypes[nodes[node * nodeFields + typeAt]]}:${strings[nodes[node * nodeFields + nameAt]].slice(0, 40)}.${label}`,
        );
    }
  }
  const properties = (at) => {
    const names = [];
    for (
      let index = 0, edge = firstEdge[at / nodeFields];
      index < nodes[at + edgesAt];
      index++, edge += edgeFields
    )
      if (edgeTypes[edges[edge + edgeTypeAt]] === "property") names.push(strings[edges[edge + edgeNameAt]]);
    return names;
  };
  const ids = new Set();
  const rows = new Map();
  for (let at = 0; at < nodes.length; at += nodeFields) {
    const type = nodeTypes[nodes[at + typeAt]];
    let name = strings[nodes[at + nameAt]].slice(0, 60);
    ids.add(nodes[at + idAt]);
    if (type.endsWith("string")) name = "(string)";
    if (type === "number") name = "(number)";
    let key = `${type}:${name}`;
    if (known !== undefined && !known.has(nodes[at + idAt])) {
      if (type === "object" && (name === "Object" || name === "Array"))
        key += `{${properties(at)
          .filter((p) => p !== "__proto__" && p !== "map")
          .slice(0, 8)
          .join(",")}}`;
      if (type === "object" && name === "Generator") {
        for (
          let index = 0, edge = firstEdge[at / nodeFields];
          index < nodes[at + edgesAt];
          index++, edge += edgeFields
        )
          if (strings[edges[edge + edgeNameAt]] === "function")
            key += ` fn=${strings[nodes[edges[edge + edgeToAt] + nameAt]]}`;
      }
      if (type === "array" || type === "closure" || name === "system / Context" || name === "Promise")
        key += ` <- ${retainer.get(at) ?? "?"}`;
    }
    const row = rows.get(key) ?? { count: 0, size: 0 };
    row.count++;
    row.size += nodes[at + sizeAt];
    rows.set(key, row);
  }
  return { rows, ids };
}

for (let round = 0; round < 2; round++) {
  const warm = await park(300, `warm${round}`);
  release();
  await Promise.all(warm);
}
const before = summarize(takeHeapSnapshot()).rows;
const known = summarize(takeHeapSnapshot()).ids;
const parked = await park(n, "parked");
const after = summarize(takeHeapSnapshot(), known).rows;
const added = [];
for (const [key, row] of after) {
  const old = before.get(key) ?? { count: 0, size: 0 };
  // Fewer than one object in twenty runs is not per run (this script's own tables, code).
  if (row.size > old.size && row.count - old.count >= n / 20)
    added.push([key, (row.count - old.count) / n, (row.size - old.size) / n]);
}
added.sort((a, b) => b[2] - a[2]);
const total = added.reduce((sum, row) => sum + row[2], 0);
console.log(
  `${Math.round(total)} bytes per parked run in new objects (N = ${n}); per run: bytes, count, what`,
);
for (const [key, count, size] of added.slice(0, Number(process.env.ROWS ?? 80)))
  console.log(`${size.toFixed(0).padStart(6)} ${count.toFixed(2).padStart(6)} ${key}`);
release();
await Promise.all(parked);
await runtime.close();
