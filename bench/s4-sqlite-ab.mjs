/**
 * S4's SQLite on − off for two builds in one process, for a machine too loaded for `run.mjs`'s separate runs to
 * be compared. Not part of `npm run bench`.
 *
 *   node --expose-gc bench/s4-sqlite-ab.mjs <dist before> <dist after>    # e.g. /tmp/base/dist dist
 *
 * Each build gets two runtimes on the S1 workload (durable off and on), each on a SQLite file of its own. They
 * take turns, RUNS runs at a time, for ROUNDS rounds, the order reversed every other round, so drift in the
 * machine's load falls on all four alike. Printed per build: the medians over rounds of µs per step off, on, and
 * on − off (wall, and CPU of the whole process), and each round's on − off.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { median } from "./measure.mjs";
import { createToolLoopModel } from "./models.mjs";
import { ADD_SCHEMA, add } from "./tools.mjs";

const TOOL_STEPS = 10;
const STEPS = TOOL_STEPS + 1;
const ROUNDS = Number(process.env.ROUNDS ?? 30);
const RUNS = Number(process.env.RUNS ?? 20);
const WARMUP_RUNS = 30;

const dists = process.argv.slice(2).map((dist) => resolve(dist));
if (dists.length === 0) throw new Error("usage: s4-sqlite-ab.mjs <dist> [<dist> …]");
const dir = await mkdtemp(join(tmpdir(), "keel-s4-ab-"));
try {
  const impls = [];
  for (const [build, dist] of dists.entries()) {
    const { Runtime, defineTool } = await import(join(dist, "index.js"));
    for (const durable of [false, true]) {
      const runtime = await Runtime.fromDict({
        session: { type: "sqlite", config: { db_path: join(dir, `${build}-${durable}.db`) } },
        agents: [
          {
            id: "bench",
            name: "Bench",
            llm: createToolLoopModel({ toolSteps: TOOL_STEPS }),
            runtime: { max_steps: STEPS + 5 },
            tools: [defineTool({ name: "add", description: "add", inputSchema: ADD_SCHEMA, execute: add })],
          },
        ],
      });
      const request = { agentId: "bench", inputText: "Add the numbers.", ...(durable ? { durable } : {}) };
      const runOnce = async () => {
        const result = await runtime.runDetailed(request);
        if (result.stopReason !== "completed" || result.metadata.steps !== STEPS) {
          throw new Error(`run ended ${result.stopReason} after ${result.metadata.steps} steps`);
        }
      };
      for (let run = 0; run < WARMUP_RUNS; run++) await runOnce();
      impls.push({ build, durable, runtime, runOnce, wall: [], cpu: [] });
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const impl of round % 2 === 0 ? impls : [...impls].reverse()) {
      globalThis.gc?.();
      const cpuBefore = process.cpuUsage();
      const start = performance.now();
      for (let run = 0; run < RUNS; run++) await impl.runOnce();
      const cpu = process.cpuUsage(cpuBefore);
      impl.wall.push(((performance.now() - start) * 1000) / RUNS / STEPS);
      impl.cpu.push((cpu.user + cpu.system) / RUNS / STEPS);
    }
  }
  for (const [build, dist] of dists.entries()) {
    const [off, on] = [false, true].map((durable) =>
      impls.find((i) => i.build === build && i.durable === durable),
    );
    const onMinusOff = (figure) => on[figure].map((value, round) => value - off[figure][round]);
    const fixed = (value) => Number(value.toFixed(1));
    console.log(
      JSON.stringify({
        build: dist,
        usPerStepOff: fixed(median(off.wall)),
        usPerStepOn: fixed(median(on.wall)),
        usPerStepCheckpoint: fixed(median(onMinusOff("wall"))),
        usPerStepCheckpointCpu: fixed(median(onMinusOff("cpu"))),
        byRound: onMinusOff("wall").map(Math.round),
      }),
    );
  }
  for (const impl of impls) await impl.runtime.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
