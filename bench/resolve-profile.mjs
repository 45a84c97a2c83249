/**
 * Where resolving parked runs goes: `node --expose-gc bench/resolve-profile.mjs [N] [out.cpuprofile]` parks N S3
 * runs, then profiles (V8's sampling profiler, through the inspector) only the resolve phase: releasing every
 * parked tool and waiting for every run to finish. Prints µs per run and the top functions by self time.
 *
 * `node --expose-gc --trace-gc-nvp bench/resolve-profile.mjs N alloc` profiles nothing and prints the bytes the
 * resolve phase allocated per run instead (the `allocated=` V8 reports between two forced collections), a
 * figure that does not depend on the machine's load.
 *
 * `node --expose-gc bench/resolve-profile.mjs N heap` samples the resolve phase's allocations instead (V8's
 * sampling heap profiler, every 256 B on average, collected objects included) and prints the bytes per run by the
 * function that allocated them.
 */
import fs from "node:fs";
import { Session } from "node:inspector/promises";
import { heapAfterGc, now, waitUntil } from "./measure.mjs";
import { openParkingRuntime } from "./parking-runtime.mjs";

const n = Number(process.argv[2] ?? 10_000);
const mode = process.argv[3];
const alloc = mode === "alloc";
const heap = mode === "heap";
const out = alloc || heap ? undefined : mode;
const { runtime, parking, start: startRun } = await openParkingRuntime();
let next = 0;
async function round(count, profile) {
  parking.resolvers.length = 0;
  const done = [];
  for (let index = 0; index < count; index++) done.push(startRun(`p-${next++}`));
  await waitUntil(() => parking.resolvers.length === count, 120_000, "parked runs");
  await heapAfterGc();
  const session = profile && !alloc ? new Session() : null;
  if (profile && alloc) {
    globalThis.gc();
    process.stdout.write("ALLOC-BEGIN\n");
  }
  if (session && heap) {
    session.connect();
    await session.post("HeapProfiler.enable");
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  } else if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
  }
  const start = now();
  for (let index = 0; index < count; index++) parking.resolvers[index](index);
  await Promise.all(done);
  const ms = now() - start;
  let profileData;
  if (session && heap) ({ profile: profileData } = await session.post("HeapProfiler.stopSampling"));
  else if (session) ({ profile: profileData } = await session.post("Profiler.stop"));
  if (profile && alloc) {
    // Only what the resolved runs left behind survives this collection; its line closes the sum.
    done.length = 0;
    globalThis.gc();
    process.stdout.write("ALLOC-END\n");
  }
  return { usPerRun: (ms * 1000) / count, profile: profileData };
}
for (let index = 0; index < 3; index++) await round(500, false);
const { usPerRun, profile } = await round(n, true);
console.log(`resolve: ${usPerRun.toFixed(1)} µs per run (N = ${n})`);
if (alloc) {
  await runtime.close();
  process.exit(0);
}
if (heap) {
  // Self bytes by function: each sample is an object of `size` bytes allocated in that function.
  const self = new Map();
  const sizes = new Map();
  const walk = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber + 1}`;
    sizes.set(node.id, key);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  for (const sample of profile.samples) {
    const key = sizes.get(sample.nodeId);
    self.set(key, (self.get(key) ?? 0) + sample.size);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`sampled: ${Math.round(total / n)} B per run`);
  for (const [key, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40))
    console.log(`${String(Math.round(bytes / n)).padStart(6)} B ${key}`);
  await runtime.close();
  process.exit(0);
}
if (out) fs.writeFileSync(out, JSON.stringify(profile));
const self = new Map();
const dt = profile.timeDeltas;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
for (let index = 0; index < profile.samples.length; index++) {
  const node = byId.get(profile.samples[index]);
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + (dt[index] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40))
  console.log(`${((100 * us) / total).toFixed(1).padStart(5)}% ${key}`);
await runtime.close();
