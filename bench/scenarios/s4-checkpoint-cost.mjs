/**
 * S4 checkpoint cost: the S1 run (11 model calls, 10 tool calls) with durable checkpoints on and off, for the
 * in-memory, JSONL, SQLite and Postgres stores. µs of wall time per step each way, and the difference, which is
 * what checkpoints cost. The hand-written loop's "checkpoint" is a JSON serialisation of its transcript after
 * every step. Postgres is skipped, with a warning, when no server answers.
 */
import { createKeelRuntime } from "../keel-runtime.mjs";
import { baselineLoopImpl, keelLoopImpl } from "../loop-impls.mjs";
import { measureLoopOverhead } from "../loop-overhead.mjs";
import { check, median, round } from "../measure.mjs";
import { createToolLoopModel } from "../models.mjs";
import { openBenchStores } from "../stores.mjs";

const TOOL_STEPS = 10;
const STEPS = TOOL_STEPS + 1;

export async function s4CheckpointCost({ quick, log }) {
  const { stores, close } = await openBenchStores("keel-bench-s4");
  try {
    const reachable = [];
    for (const entry of stores) {
      const problem = await openProblem(entry.session);
      if (problem === null) reachable.push(entry);
      else log(`  ${entry.store} skipped: ${problem}`);
    }
    // Checkpoints per run, as each durable instance counted them on its first run.
    const checkpointsPerRun = new Map();
    const impls = () => [
      ...reachable.flatMap(({ store, session }) =>
        [false, true].map((durable) =>
          keelLoopImpl(TOOL_STEPS, {
            impl: `keel ${store} ${durable ? "on" : "off"}`,
            session,
            durable,
            onOpen: async (runtime, runOnce) => {
              const { runId } = await runOnce();
              const count = (await runtime.listRunCheckpoints(runId)).length;
              check(
                durable ? count > 0 : count === 0,
                `${store}: ${count} checkpoints in a run (durable ${durable})`,
              );
              checkpointsPerRun.set(store, Math.max(count, checkpointsPerRun.get(store) ?? 0));
            },
          }),
        ),
      ),
      baselineLoopImpl(TOOL_STEPS, { impl: "hand-written off" }),
      baselineLoopImpl(TOOL_STEPS, { impl: "hand-written on", onStep: jsonCheckpoint }),
    ];
    const measured = await measureLoopOverhead([TOOL_STEPS], {
      impls,
      reps: quick ? 1 : 5,
      minMs: quick ? 60 : 250,
      minRuns: quick ? 3 : 5,
      warmupMs: quick ? 100 : 300,
      settleRuns: quick ? 2 : 3,
      log,
    });
    const figures = (name) => measured.get(name).get(TOOL_STEPS);
    const lines = reachable.map(({ store }) => {
      const compared = compare(figures(`keel ${store} off`), figures(`keel ${store} on`));
      const perRun = checkpointsPerRun.get(store);
      return {
        scenario: "S4",
        impl: "keel",
        store,
        ...compared,
        checkpointsPerRun: perRun,
        usPerCheckpoint: round((compared.usPerStepCheckpoint * STEPS) / perRun),
      };
    });
    lines.push({
      scenario: "S4",
      impl: "hand-written",
      store: "json_copy",
      ...compare(figures("hand-written off"), figures("hand-written on")),
    });
    return lines;
  } finally {
    await close().catch((error) => log(`  could not clean up S4's stores: ${error.message}`));
  }
}

/** Medians each way, and the median over repetitions of on − off (both measured in the same repetition). */
function compare(off, on) {
  const differences = on.usPerStepWallByRep.map((value, rep) => value - off.usPerStepWallByRep[rep]);
  return {
    usPerStepOff: round(off.usPerStepWall),
    usPerStepOn: round(on.usPerStepWall),
    usPerStepCheckpoint: round(median(differences)),
    runsOff: off.runs,
    runsOn: on.runs,
  };
}

/** The hand-written loop's checkpoint: its transcript serialised, as a store would write it. */
export let lastJsonCheckpoint = "";
function jsonCheckpoint(messages) {
  lastJsonCheckpoint = JSON.stringify(messages);
}

/** Why a runtime on this store does not open (no Postgres server, say), or null when it does. */
async function openProblem(session) {
  if (session === undefined) return null;
  try {
    const runtime = await createKeelRuntime({ model: createToolLoopModel(), tools: [], session });
    await runtime.close();
    return null;
  } catch (error) {
    return error.message.split("\n")[0];
  }
}
