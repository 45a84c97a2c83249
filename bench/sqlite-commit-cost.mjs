/**
 * The SQLite store's checkpoint commits alone, without the run loop around them: the commits of one durable S1
 * run (S4's workload) are recorded, then written again as `runs` fresh runs into a fresh file. Not part of
 * `npm run bench`.
 *
 *   node bench/sqlite-commit-cost.mjs [runs]       # µs (wall and CPU) per commit, 21 commits a run
 *   valgrind --tool=callgrind node --single-threaded bench/sqlite-commit-cost.mjs 120  # minus the same with 40
 *
 * A count of instructions with `runs` = 120, minus the same with 40, over 21 × 80, is what one commit costs in the
 * store (with renaming the recorded commits for each run, a few thousand instructions). Both counts include the
 * warm-up's optimising compiles, which go on for a few hundred commits, so the difference holds few of them;
 * `callgrind_annotate` shows what is left of them (`compiler::`) and of garbage collection, which varies more.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKeelRuntime } from "./keel-runtime.mjs";
import { now } from "./measure.mjs";
import { createToolLoopModel } from "./models.mjs";
import { recordCommits, renamed } from "./recorded-commits.mjs";

const runs = Number(process.argv[2] ?? 200);
const WARMUP_RUNS = Number(process.env.WARMUP_RUNS ?? 100);
const dir = await mkdtemp(join(tmpdir(), "keel-sqlite-commit-"));
try {
  const recorded = await recordCommits({ type: "sqlite", config: { db_path: join(dir, "record.db") } });
  const runtime = await createKeelRuntime({
    model: createToolLoopModel({ toolSteps: 10 }),
    tools: [],
    session: { type: "sqlite", config: { db_path: join(dir, "replay.db") } },
  });
  const store = runtime.sessionManager;
  // Each run's commits are made just before they are written, so nothing piles up in the heap as N grows.
  const replay = async (prefix, count) => {
    for (let index = 0; index < count; index++) {
      for (const commit of renamed(recorded, `${prefix}${index}`)) await store.commitCheckpoint(commit);
    }
  };
  await replay("warm-", WARMUP_RUNS);
  const cpuBefore = process.cpuUsage();
  const start = now();
  await replay("run-", runs);
  const wallMs = now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  await runtime.close();
  const commits = runs * recorded.length;
  if (commits > 0) {
    const perCommit = (us) => (us / commits).toFixed(1);
    console.log(
      `${commits} commits (${recorded.length} a run): ${perCommit(wallMs * 1000)} µs wall, ` +
        `${perCommit(cpu.user)} µs user, ${perCommit(cpu.system)} µs system per commit`,
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
