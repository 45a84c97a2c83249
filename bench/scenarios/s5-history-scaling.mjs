/**
 * S5 history scaling: the S1 run with 10 and with 50 tool steps (11 and 51 model calls). Per-step cost must
 * stay flat as the transcript grows: growth = µs/step at 51 steps ÷ µs/step at 11 steps. A runtime with a large
 * per-run fixed cost shows growth below 1, so the marginal cost of a step is reported too.
 */
import { measureLoopOverhead } from "../loop-overhead.mjs";
import { round } from "../measure.mjs";

export async function s5HistoryScaling({ quick, log }) {
  const measured = await measureLoopOverhead([10, 50], {
    reps: quick ? 2 : 9,
    minMs: quick ? 100 : 300,
    minRuns: quick ? 10 : 50,
    warmupMs: quick ? 150 : 500,
    log,
  });
  return [...measured].map(([impl, bySteps]) => {
    const short = bySteps.get(10).usPerStepWall;
    const long = bySteps.get(50).usPerStepWall;
    return {
      scenario: "S5",
      impl,
      usPerStep11: round(short),
      usPerStep51: round(long),
      growth: round(long / short),
      // µs each of the 40 extra steps adds (51-step run − 11-step run) ÷ 40: per-run fixed costs cancel out.
      usPerStepMarginal: round((long * 51 - short * 11) / 40),
    };
  });
}
