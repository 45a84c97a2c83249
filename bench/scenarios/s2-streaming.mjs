/**
 * S2 streaming: one model call emitting 1,000 text deltas, consumed through `runtime.stream()` (Keel) or the
 * hand-written loop's async generator. Per run: time from the stream() call to the first and the last delta
 * chunk, and to the end of the stream; µs per event = whole stream ÷ deltas delivered.
 */
import { streamBaselineLoop } from "../baseline-loop.mjs";
import { AGENT_ID, createKeelRuntime } from "../keel-runtime.mjs";
import { check, fullGc, median, now, round } from "../measure.mjs";
import { createDeltaModel } from "../models.mjs";

const DELTAS = 1000;

function streamImpls() {
  return [
    {
      impl: "keel",
      async open() {
        const runtime = await createKeelRuntime({ model: createDeltaModel({ deltas: DELTAS }), tools: [] });
        const request = { agentId: AGENT_ID, inputText: "Stream." };
        return { stream: () => runtime.stream(request), close: () => runtime.close() };
      },
    },
    {
      impl: "hand-written",
      async open() {
        const input = { model: createDeltaModel({ deltas: DELTAS }), tools: {}, inputText: "Stream." };
        return { stream: () => streamBaselineLoop(input), close: async () => {} };
      },
    },
  ];
}

/** One streamed run, timed from the consumer's side. */
async function consume(instance) {
  const start = now();
  let first = -1;
  let last = -1;
  let deltas = 0;
  let chunks = 0;
  let finished = false;
  for await (const chunk of instance.stream()) {
    chunks++;
    if (chunk.kind === "llm.delta") {
      const at = now();
      if (first < 0) first = at;
      last = at;
      deltas++;
    } else if (chunk.kind === "run.finished") finished = true;
  }
  const end = now();
  check(deltas === DELTAS && finished, `stream delivered ${deltas} deltas (finished: ${finished})`);
  return { firstMs: first - start, lastMs: last - start, totalMs: end - start, deltas, chunks };
}

export async function s2Streaming({ quick, log }) {
  const reps = quick ? 2 : 9;
  const runsPerRep = quick ? 30 : 150;
  const impls = streamImpls();
  for (const impl of impls) {
    const instance = await impl.open();
    for (let index = 0; index < (quick ? 50 : 300); index++) await consume(instance);
    await instance.close();
  }
  const samples = new Map(impls.map((impl) => [impl.impl, []]));
  for (let rep = 0; rep < reps; rep++) {
    for (const impl of rep % 2 === 0 ? impls : [...impls].reverse()) {
      const instance = await impl.open();
      await consume(instance);
      await fullGc();
      const runs = [];
      for (let index = 0; index < runsPerRep; index++) runs.push(await consume(instance));
      await instance.close();
      const figures = {
        usPerEvent: median(runs.map((run) => (run.totalMs * 1000) / run.deltas)),
        firstEventMs: median(runs.map((run) => run.firstMs)),
        lastEventMs: median(runs.map((run) => run.lastMs)),
        chunks: runs[0].chunks,
      };
      samples.get(impl.impl).push(figures);
      log(`  rep ${rep + 1}/${reps} ${impl.impl}: ${figures.usPerEvent.toFixed(3)} µs/event`);
    }
  }
  return [...samples].map(([impl, list]) => {
    const usPerEvent = median(list.map((figures) => figures.usPerEvent));
    return {
      scenario: "S2",
      impl,
      usPerEvent: round(usPerEvent),
      eventsPerSecond: Math.round(1e6 / usPerEvent),
      firstEventMs: round(median(list.map((figures) => figures.firstEventMs)), 4),
      lastEventMs: round(median(list.map((figures) => figures.lastEventMs)), 4),
      chunksPerRun: list[0].chunks,
      runs: list.length * runsPerRep,
    };
  });
}
