/**
 * H1 held heap: what a long-lived process on the default store keeps as runs go by. S1 runs (10 tool steps)
 * back to back on one runtime, for 100,000 runs (`--quick`: 10,000): every run on a session of its own, once
 * with sessions Keel makes up (the request names none) and once with a session named per run. Heap after a
 * full GC every tenth of the way. Flat means the store is bounded: past its limits it drops what it may.
 */
import { keelLoopImpl } from "../loop-impls.mjs";
import { heapAfterGc, round } from "../measure.mjs";

export async function h1HeldHeap({ quick, log }) {
  const runs = quick ? 10_000 : 100_000;
  const every = runs / 10;
  const lines = [];
  for (const sessions of ["generated", "named"]) {
    let next = 0;
    let runtime;
    const instance = await keelLoopImpl(10, {
      onOpen: (opened) => {
        runtime = opened;
      },
    }).open();
    const runOnce =
      sessions === "generated"
        ? instance.runOnce
        : () =>
            runtime.runDetailed({
              agentId: "bench",
              inputText: "Add the numbers.",
              sessionId: `h1-${next++}`,
            });
    const heapMb = [];
    const start = await heapAfterGc();
    for (let index = 1; index <= runs; index++) {
      await runOnce();
      if (index % every === 0) {
        const heap = await heapAfterGc();
        heapMb.push(round((heap - start) / 1e6, 2));
        log(`  ${sessions} sessions: ${index} runs, heap +${heapMb.at(-1)} MB`);
      }
    }
    await instance.close();
    // The growth over the second half, when a bounded store has reached its limits.
    const half = heapMb.length >> 1;
    const lateBytesPerRun = ((heapMb.at(-1) - heapMb[half - 1]) * 1e6) / (runs - half * every);
    lines.push({
      scenario: "H1",
      impl: "keel",
      sessions,
      runs,
      heapMbAfterEachTenth: heapMb,
      bytesPerRunSecondHalf: Math.round(lateBytesPerRun),
    });
  }
  return lines;
}
