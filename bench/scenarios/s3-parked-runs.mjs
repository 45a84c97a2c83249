/**
 * S3 parked runs: N concurrent runs (each on its own session) whose one tool call blocks on a promise the
 * benchmark holds. Heap bytes per parked run (heapUsed after a full GC, parked minus before), the time to
 * start and park all N, and the time to resolve all N and let every run finish; then the heap the finished runs
 * still hold (what the store keeps of them), over N.
 */
import { runBaselineLoop } from "../baseline-loop.mjs";
import { check, heapAfterGc, median, now, round, waitUntil } from "../measure.mjs";
import { createToolLoopModel } from "../models.mjs";
import { openParkingRuntime } from "../parking-runtime.mjs";
import { createParkingTool, WAIT_SCHEMA } from "../tools.mjs";

function parkedImpls() {
  return [
    {
      impl: "keel",
      async open() {
        const { runtime, parking, start } = await openParkingRuntime();
        let next = 0;
        return {
          resolvers: parking.resolvers,
          start: () => start(`s3-${next++}`),
          completed: (result) => result.stopReason === "completed" && result.finalOutput === "done",
          close: () => runtime.close(),
        };
      },
    },
    {
      impl: "hand-written",
      async open() {
        const parking = createParkingTool();
        const input = {
          model: createToolLoopModel({ toolSteps: 1, toolName: "wait" }),
          tools: { wait: { execute: parking.execute, inputSchema: WAIT_SCHEMA } },
          inputText: "Wait.",
          maxSteps: 4,
        };
        return {
          resolvers: parking.resolvers,
          start: () => runBaselineLoop(input),
          completed: (result) => result.text === "done" && result.steps === 2,
          close: async () => {},
        };
      },
    },
  ];
}

/** Park n runs, weigh them, release them. */
async function parkAndRelease(instance, n) {
  const resolvers = instance.resolvers;
  resolvers.length = 0;
  const done = new Array(n);
  const heapBefore = await heapAfterGc();
  const parkStart = now();
  for (let index = 0; index < n; index++) done[index] = instance.start();
  await waitUntil(() => resolvers.length === n, 60_000, `${n} parked runs`);
  const parkMs = now() - parkStart;
  const heapParked = await heapAfterGc();
  const resolveStart = now();
  for (let index = 0; index < n; index++) resolvers[index](index);
  const results = await Promise.all(done);
  const resolveMs = now() - resolveStart;
  resolvers.length = 0;
  let completed = 0;
  for (const result of results) if (instance.completed(result)) completed++;
  check(completed === n, `${completed} of ${n} parked runs completed`);
  results.length = 0;
  done.length = 0;
  const heapFinished = await heapAfterGc();
  return {
    heapBytesPerParkedRun: (heapParked - heapBefore) / n,
    heapBytesPerFinishedRun: (heapFinished - heapBefore) / n,
    parkMs,
    resolveUsPerRun: (resolveMs * 1000) / n,
  };
}

export async function s3ParkedRuns({ quick, log }) {
  const sizes = [
    { n: 1000, reps: quick ? 1 : 7 },
    { n: 10_000, reps: quick ? 1 : 5 },
  ];
  const impls = parkedImpls();
  for (const impl of impls) {
    const instance = await impl.open();
    for (let index = 0; index < 3; index++) await parkAndRelease(instance, 500);
    await instance.close();
  }
  const lines = [];
  for (const { n, reps } of sizes) {
    const samples = new Map(impls.map((impl) => [impl.impl, []]));
    for (let rep = 0; rep < reps; rep++) {
      for (const impl of rep % 2 === 0 ? impls : [...impls].reverse()) {
        // A fresh instance: what earlier runs left in the store is not counted against the parked ones.
        const instance = await impl.open();
        await parkAndRelease(instance, 100);
        const figures = await parkAndRelease(instance, n);
        await instance.close();
        samples.get(impl.impl).push(figures);
        log(
          `  N=${n} rep ${rep + 1}/${reps} ${impl.impl}: ${Math.round(figures.heapBytesPerParkedRun)} B/run, ` +
            `park ${figures.parkMs.toFixed(1)} ms, resolve ${figures.resolveUsPerRun.toFixed(2)} µs/run`,
        );
      }
    }
    for (const [impl, list] of samples) {
      lines.push({
        scenario: "S3",
        impl,
        n,
        heapBytesPerParkedRun: Math.round(median(list.map((figures) => figures.heapBytesPerParkedRun))),
        heapBytesPerFinishedRun: Math.round(median(list.map((figures) => figures.heapBytesPerFinishedRun))),
        parkMsTotal: round(median(list.map((figures) => figures.parkMs)), 2),
        resolveUsPerRun: round(median(list.map((figures) => figures.resolveUsPerRun))),
      });
    }
  }
  return lines;
}
