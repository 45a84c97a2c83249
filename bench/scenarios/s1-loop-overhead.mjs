/**
 * S1 loop overhead: one run = the model asks for `add(a, b)` ten times, then answers (11 model calls, 10 tool
 * calls). µs of wall and CPU time per step over many sequential runs after warm-up, and the p99 run time.
 */
import { measureLoopOverhead } from "../loop-overhead.mjs";
import { round } from "../measure.mjs";

export async function s1LoopOverhead({ quick, log }) {
  const measured = await measureLoopOverhead([10], {
    reps: quick ? 2 : 11,
    minMs: quick ? 100 : 400,
    minRuns: quick ? 20 : 100,
    warmupMs: quick ? 200 : 1000,
    log,
  });
  return [...measured].map(([impl, bySteps]) => {
    const figures = bySteps.get(10);
    return {
      scenario: "S1",
      impl,
      usPerStepWall: round(figures.usPerStepWall),
      usPerStepCpu: round(figures.usPerStepCpu),
      p99RunMs: round(figures.p99RunMs, 4),
      runs: figures.runs,
    };
  });
}
