/**
 * S4's checkpoint commits, recorded from one durable S1 run and replayed as other runs', for the benchmarks
 * that measure a store's commits alone (`sqlite-commit-cost.mjs`, `postgres-commit-cost.mjs`).
 */
import { keelLoopImpl } from "./loop-impls.mjs";

/** The `commitCheckpoint` calls of one durable S1 run (the second, so the first's start-up is left out). */
export async function recordCommits(session) {
  let recorded = [];
  const impl = keelLoopImpl(10, {
    session,
    durable: true,
    onOpen: (runtime) => {
      const store = runtime.sessionManager;
      const commit = store.commitCheckpoint;
      store.commitCheckpoint = (value) => {
        recorded.push(structuredClone(value));
        return commit.call(store, value);
      };
    },
  });
  const instance = await impl.open();
  await instance.runOnce();
  recorded = [];
  await instance.runOnce();
  await instance.close();
  return recorded;
}

/** The recorded commits as those of run `runId` in session `s-<runId>`. */
export function renamed(recorded, runId) {
  const sessionId = `s-${runId}`;
  return recorded.map((commit) => {
    const events = commit.events.map((event) => ({ ...event, runId, sessionId }));
    const state = { ...commit.checkpoint.state, runId, sessionId };
    const checkpointId = commit.checkpoint.checkpointId.replace(commit.runId, runId);
    return { ...commit, runId, sessionId, events, checkpoint: { ...commit.checkpoint, checkpointId, state } };
  });
}
