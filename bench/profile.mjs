/**
 * Keel alone on one benchmark workload, for profilers. Not part of `npm run bench`.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile.mjs S1 [seconds]   # 11-step runs back to back
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile.mjs S2 [seconds]   # 1,000-delta streams
 *   node --expose-gc bench/profile.mjs S3 [n] [--snapshot]                   # n parked runs: heap by type
 *   node bench/profile.mjs S4 <store> [seconds]        # durable S1 runs: time per store call, per step
 *
 * S3 prints the heap growth per parked run and, with --snapshot, writes a heap snapshot (open it in Chrome
 * DevTools → Memory, compare with the `before` one). S4 runs durable S1 runs on one store (in_memory,
 * jsonl_file, sqlite or postgres; the files go to a temp dir, Postgres to a schema dropped afterwards) and
 * prints, per step, the wall time spent inside each store method and outside the store.
 */
import v8 from "node:v8";
import { AGENT_ID, createKeelRuntime, keelTool } from "./keel-runtime.mjs";
import { keelLoopImpl, loopImpls } from "./loop-impls.mjs";
import { heapAfterGc, now, waitUntil } from "./measure.mjs";
import { createDeltaModel, createToolLoopModel } from "./models.mjs";
import { openBenchStores, STORE_NAMES } from "./stores.mjs";
import { createParkingTool, WAIT_SCHEMA } from "./tools.mjs";

/** The SessionManager methods S4 times (`session()` holds a whole run, so it is left out). */
const STORE_METHODS = [
  "getState",
  "setState",
  "appendMessage",
  "appendMessages",
  "loadMessages",
  "saveArtifact",
  "listArtifacts",
  "createCheckpoint",
  "commitCheckpoint",
  "loadCheckpoint",
  "listCheckpoints",
  "saveRun",
  "getRun",
  "appendEvents",
  "loadEvents",
  "saveRunMessages",
  "loadRunMessages",
];

const [scenario = "S1", amount, ...flags] = process.argv.slice(2);

if (scenario === "S1" || scenario === "S5") {
  const seconds = Number(amount ?? 10);
  const toolSteps = scenario === "S1" ? 10 : 50;
  const keel = loopImpls(toolSteps).find((impl) => impl.impl === "keel");
  let runs = 0;
  const until = now() + seconds * 1000;
  while (now() < until) {
    // A fresh runtime every 2,000 runs, as the benchmark does per repetition.
    const instance = await keel.open();
    for (let index = 0; index < 2000 && now() < until; index++, runs++) await instance.runOnce();
    await instance.close();
  }
  console.log(`${scenario}: ${runs} runs of ${toolSteps + 1} steps`);
} else if (scenario === "S2") {
  const seconds = Number(amount ?? 10);
  let runtime = await createKeelRuntime({ model: createDeltaModel({ deltas: 1000 }), tools: [] });
  let runs = 0;
  const until = now() + seconds * 1000;
  while (now() < until) {
    for await (const _chunk of runtime.stream({ agentId: AGENT_ID, inputText: "Stream." })) {
    }
    if (++runs % 500 === 0) {
      await runtime.close();
      runtime = await createKeelRuntime({ model: createDeltaModel({ deltas: 1000 }), tools: [] });
    }
  }
  await runtime.close();
  console.log(`S2: ${runs} streams of 1,000 deltas`);
} else if (scenario === "S3") {
  const n = Number(amount ?? 10_000);
  const parking = createParkingTool();
  const runtime = await createKeelRuntime({
    model: createToolLoopModel({ toolSteps: 1, toolName: "wait" }),
    tools: [keelTool("wait", parking.execute, WAIT_SCHEMA)],
    maxSteps: 4,
  });
  const start = (index) =>
    runtime.runDetailed({ agentId: AGENT_ID, sessionId: `s3-${index}`, inputText: "Wait." });
  // One run through first, so the agent is loaded before the baseline is taken.
  const first = start(-1);
  await waitUntil(() => parking.resolvers.length === 1);
  parking.resolvers.pop()(0);
  await first;
  const before = await heapAfterGc();
  if (flags.includes("--snapshot")) console.log(`before: ${v8.writeHeapSnapshot()}`);
  const done = [];
  for (let index = 0; index < n; index++) done.push(start(index));
  await waitUntil(() => parking.resolvers.length === n);
  const parked = await heapAfterGc();
  console.log(`S3: ${n} parked runs, ${Math.round((parked - before) / n)} heap bytes per run`);
  if (flags.includes("--snapshot")) console.log(`parked: ${v8.writeHeapSnapshot()}`);
  for (const resolve of parking.resolvers) resolve(0);
  await Promise.all(done);
  await runtime.close();
} else if (scenario === "S4") {
  await profileStoreCalls(amount ?? "in_memory", Number(flags[0] ?? 5));
} else {
  console.error("usage: node bench/profile.mjs S1|S2|S3|S4|S5 [seconds|n|store] [--snapshot]");
  process.exit(2);
}

/**
 * S4: durable S1 runs on `store` for `seconds`; the wall time from the call of each store method until its
 * promise settles, per step. Other work can run while a call waits (the async event bus, say), so the in-memory
 * store's figures are upper bounds; `--cpu-prof` shows where its time goes.
 */
async function profileStoreCalls(store, seconds) {
  if (!STORE_NAMES.includes(store))
    throw new Error(`Unknown store '${store}'; known: ${STORE_NAMES.join(", ")}`);
  const { stores, close } = await openBenchStores("keel-profile-s4");
  const { session } = stores.find((entry) => entry.store === store);
  const spent = new Map();
  const calls = new Map();
  const timeStoreCalls = (runtime) => {
    const manager = runtime.sessionManager;
    for (const name of STORE_METHODS) {
      const original = manager[name];
      manager[name] = async (...args) => {
        const start = now();
        try {
          return await original.apply(manager, args);
        } finally {
          spent.set(name, (spent.get(name) ?? 0) + now() - start);
          calls.set(name, (calls.get(name) ?? 0) + 1);
        }
      };
    }
  };
  const durable = keelLoopImpl(10, { session, durable: true, onOpen: timeStoreCalls });
  try {
    const instance = await durable.open();
    for (let index = 0; index < 5; index++) await instance.runOnce();
    spent.clear();
    calls.clear();
    let runs = 0;
    const start = now();
    const until = start + seconds * 1000;
    while (now() < until) {
      await instance.runOnce();
      runs++;
    }
    const wall = now() - start;
    await instance.close();
    const steps = runs * 11;
    const perStep = (ms) => ((ms * 1000) / steps).toFixed(1).padStart(8);
    console.log(`S4 ${store}: ${runs} durable runs of 11 steps, ${perStep(wall)} µs/step in all`);
    const rows = [...spent].sort((a, b) => b[1] - a[1]);
    for (const [name, ms] of rows)
      console.log(
        `  ${name.padEnd(20)} ${perStep(ms)} µs/step  ${(calls.get(name) / runs).toFixed(1)} calls/run`,
      );
    const inStore = rows.reduce((total, [, ms]) => total + ms, 0);
    console.log(`  ${"outside the store".padEnd(20)} ${perStep(wall - inStore)} µs/step`);
  } finally {
    await close();
  }
}
