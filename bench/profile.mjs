/**
 * Keel alone on one benchmark workload, for profilers. Not part of `npm run bench`.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile.mjs S1 [seconds]   # 11-step runs back to back
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile.mjs S2 [seconds]   # 1,000-delta streams
 *   node --expose-gc bench/profile.mjs S3 [n] [--snapshot]                   # n parked runs: heap by type
 *
 * S3 prints the heap growth per parked run and, with --snapshot, writes a heap snapshot (open it in Chrome
 * DevTools → Memory, compare with the `before` one).
 */
import v8 from "node:v8";
import { AGENT_ID, createKeelRuntime, keelTool } from "./keel-runtime.mjs";
import { loopImpls } from "./loop-impls.mjs";
import { heapAfterGc, now, waitUntil } from "./measure.mjs";
import { createDeltaModel, createToolLoopModel } from "./models.mjs";
import { createParkingTool, WAIT_SCHEMA } from "./tools.mjs";

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
} else {
  console.error("usage: node bench/profile.mjs S1|S2|S3|S5 [seconds|n] [--snapshot]");
  process.exit(2);
}
