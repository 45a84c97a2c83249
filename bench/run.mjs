/**
 * Keel's benchmarks: `node --expose-gc bench/run.mjs [--quick] [--only=S1,S3]` (or `npm run bench`, which
 * builds first). Prints one JSON line per (scenario, implementation) to stdout; progress goes to stderr.
 */
import os from "node:os";
import { a1Allocation } from "./scenarios/a1-allocation.mjs";
import { h1HeldHeap } from "./scenarios/h1-held-heap.mjs";
import { s1LoopOverhead } from "./scenarios/s1-loop-overhead.mjs";
import { s1Otel } from "./scenarios/s1-otel.mjs";
import { s2Streaming } from "./scenarios/s2-streaming.mjs";
import { s3ParkedRuns } from "./scenarios/s3-parked-runs.mjs";
import { s3SuspendedRuns } from "./scenarios/s3-suspended-runs.mjs";
import { s4CheckpointCost } from "./scenarios/s4-checkpoint-cost.mjs";
import { s5HistoryScaling } from "./scenarios/s5-history-scaling.mjs";
import { s6Server } from "./scenarios/s6-server.mjs";
import { s7Queue } from "./scenarios/s7-queue.mjs";
import { startup } from "./scenarios/startup.mjs";
import { t1ToolCalls } from "./scenarios/t1-tool-calls.mjs";

const SCENARIOS = {
  S1: s1LoopOverhead,
  S1OTEL: s1Otel,
  S2: s2Streaming,
  S3: s3ParkedRuns,
  S3S: s3SuspendedRuns,
  S4: s4CheckpointCost,
  S5: s5HistoryScaling,
  S6: s6Server,
  S7: s7Queue,
  T1: t1ToolCalls,
  H1: h1HeldHeap,
  A1: a1Allocation,
  ST: startup,
};

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const onlyArg = args.find((arg) => arg.startsWith("--only="));
const only = onlyArg
  ? onlyArg
      .slice("--only=".length)
      .split(",")
      .map((name) => name.trim().toUpperCase())
  : Object.keys(SCENARIOS);
const verbose = !args.includes("--silent");

for (const name of only) {
  if (!(name in SCENARIOS)) {
    console.error(`Unknown scenario '${name}'; known: ${Object.keys(SCENARIOS).join(", ")}`);
    process.exit(2);
  }
}
if (typeof globalThis.gc !== "function") {
  console.error("Run with `node --expose-gc bench/run.mjs` (S2/S3 collect garbage between measurements)");
  process.exit(2);
}

const log = (line) => {
  if (verbose) process.stderr.write(`${line}\n`);
};
log(
  `# keel bench${quick ? " (quick)" : ""}: node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}`,
);

const [load1] = os.loadavg();
if (load1 > 0.5)
  log(
    `# warning: load average ${load1.toFixed(2)} — other processes share the CPUs; Keel's figures (GC-heavy) suffer most`,
  );

const started = performance.now();
for (const name of only) {
  const scenarioStart = performance.now();
  log(`# ${name}`);
  const lines = await SCENARIOS[name]({ quick, log });
  for (const line of lines) process.stdout.write(`${JSON.stringify(line)}\n`);
  log(`# ${name} took ${((performance.now() - scenarioStart) / 1000).toFixed(1)} s`);
}
log(
  `# done in ${((performance.now() - started) / 1000).toFixed(1)} s (load average now ${os.loadavg()[0].toFixed(2)})`,
);
