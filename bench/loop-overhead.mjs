/**
 * The S1/S5 measurement: sequential runs of the tool-loop workload for each implementation and each tool-step
 * count, interleaved within every repetition (so drift hits all alike), each repetition on a fresh instance
 * after a full GC. Reports medians over repetitions.
 */
import { loopImpls } from "./loop-impls.mjs";
import { fullGc, median, now, percentile, timeSequentialRuns } from "./measure.mjs";

/**
 * @param {number[]} toolStepCounts e.g. [10] for S1, [10, 50] for S5
 * @param {object} options `impls(toolSteps)` gives the implementations (default: Keel and the hand-written
 *   loop); `settleRuns` untimed runs precede every repetition's timed ones (default 10)
 * @returns {Map<string, Map<number, {usPerStepWall:number, usPerStepCpu:number, p99RunMs:number, runs:number,
 *   usPerStepWallByRep:number[]}>>} impl → tool steps → figures (medians; the wall figure of each repetition too)
 */
export async function measureLoopOverhead(
  toolStepCounts,
  { reps, minMs, minRuns, warmupMs, settleRuns = 10, impls: implsOf = loopImpls, log = () => {} },
) {
  const samples = new Map();
  const implsBySteps = new Map(toolStepCounts.map((toolSteps) => [toolSteps, implsOf(toolSteps)]));

  for (const impls of implsBySteps.values()) {
    for (const impl of impls) {
      const instance = await impl.open();
      const until = now() + warmupMs;
      while (now() < until) await instance.runOnce();
      await instance.close();
    }
  }

  for (let rep = 0; rep < reps; rep++) {
    for (const [toolSteps, impls] of implsBySteps) {
      // Alternate which implementation goes first.
      const ordered = rep % 2 === 0 ? impls : [...impls].reverse();
      for (const impl of ordered) {
        const instance = await impl.open();
        for (let index = 0; index < settleRuns; index++) await instance.runOnce();
        await fullGc();
        const timed = await timeSequentialRuns(() => instance.runOnce(), { minRuns, minMs });
        await instance.close();
        const steps = (toolSteps + 1) * timed.runs;
        const figures = {
          usPerStepWall: (timed.wallMs * 1000) / steps,
          usPerStepCpu: timed.cpuUs / steps,
          p99RunMs: percentile(timed.durations, 0.99),
          runs: timed.runs,
        };
        if (!samples.has(impl.impl)) samples.set(impl.impl, new Map());
        const byImpl = samples.get(impl.impl);
        if (!byImpl.has(toolSteps)) byImpl.set(toolSteps, []);
        byImpl.get(toolSteps).push(figures);
        log(
          `  rep ${rep + 1}/${reps} ${impl.impl} ${toolSteps + 1} steps: ${figures.usPerStepWall.toFixed(2)} µs/step (${timed.runs} runs)`,
        );
      }
    }
  }

  const result = new Map();
  for (const [implName, byImpl] of samples) {
    const out = new Map();
    for (const [toolSteps, list] of byImpl) {
      out.set(toolSteps, {
        usPerStepWall: median(list.map((figures) => figures.usPerStepWall)),
        usPerStepCpu: median(list.map((figures) => figures.usPerStepCpu)),
        p99RunMs: median(list.map((figures) => figures.p99RunMs)),
        runs: list.reduce((total, figures) => total + figures.runs, 0),
        usPerStepWallByRep: list.map((figures) => figures.usPerStepWall),
      });
    }
    result.set(implName, out);
  }
  return result;
}
