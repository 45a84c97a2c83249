import type { RunState } from "../../loop/run-state.js";
import { withStoredRun } from "./run.js";
import type { OutputStream } from "./validate.js";

export interface CheckpointsCommandOptions {
  configPath: string;
  runId: string;
  json: boolean;
  stdout: OutputStream;
  stderr: OutputStream;
}

/** One line of `keel checkpoints`, and with `--json` the object printed for it. */
export interface CheckpointSummary {
  checkpointId: string;
  phase: string;
  step: number;
  transcriptLength: number;
  createdAt: string;
  /** The run's latest checkpoint: the only one that continues the run; the others branch a new one. */
  latest: boolean;
}

/**
 * `keel checkpoints <config> <runId>`: the run's checkpoints in the config's store, oldest first, the latest
 * marked. Exit 0, also for a run without checkpoints; a run the store does not know prints an error with its
 * hint and exits 2.
 */
export async function checkpointsCommand(options: CheckpointsCommandOptions): Promise<number> {
  const { runId, stdout } = options;
  return withStoredRun(options, async (runtime, run) => {
    const ids = await runtime.listRunCheckpoints(runId);
    const loaded = await Promise.all(
      ids.map((id) => runtime.sessionManager.loadCheckpoint(run.sessionId, id)),
    );
    const summaries: CheckpointSummary[] = [];
    for (const checkpoint of loaded) {
      if (checkpoint === null) continue;
      const state = checkpoint.state as Partial<RunState>;
      summaries.push({
        checkpointId: checkpoint.checkpointId,
        phase: state.phase ?? "unknown",
        step: state.step ?? 0,
        transcriptLength: checkpoint.transcriptLength,
        createdAt: checkpoint.createdAt,
        latest: checkpoint.checkpointId === ids[ids.length - 1],
      });
    }
    if (options.json) {
      for (const summary of summaries) stdout.write(`${JSON.stringify(summary)}\n`);
      return 0;
    }
    if (summaries.length === 0) {
      stdout.write(
        `Run ${runId} has no checkpoints. (Durable runs, \`keel run --durable\`, checkpoint every step; ` +
          "other runs only when they suspend.)\n",
      );
      return 0;
    }
    const idWidth = Math.max(...summaries.map((summary) => summary.checkpointId.length));
    for (const summary of summaries) {
      stdout.write(
        `${summary.checkpointId.padEnd(idWidth)}  ${summary.phase.padEnd(9)}  step ${summary.step}  ` +
          `transcript ${summary.transcriptLength}  ${summary.createdAt}${summary.latest ? "  latest" : ""}\n`,
      );
    }
    return 0;
  });
}
