import type { RunResult } from "../../contracts/run-types.js";
import { DecisionError } from "../../errors/error-classes.js";
import { ERROR_CODES } from "../../errors/error-codes.js";
import type { CheckpointStore, RunStore } from "../../sessions/session-manager.js";
import { checkDecisions, type ToolDecision } from "../decisions.js";
import { type LoadedRunState, loadRunState } from "./load-run-state.js";

/**
 * The suspension checkpoint of a run that waits for decisions: its latest checkpoint, read back and checked. A run
 * the store does not know, one that is not waiting, or one whose latest checkpoint is not a suspension is a
 * `DecisionError` saying what to do instead.
 */
export async function loadSuspension(
  store: CheckpointStore & RunStore,
  runId: string,
): Promise<LoadedRunState> {
  const record = await store.getRun(runId);
  if (record === null)
    throw new DecisionError(`Unknown run '${runId}'`, {
      code: ERROR_CODES.RUN_UNKNOWN,
      hint: "`keel runs <config>` lists the runs the store knows (`runtime.listRuns()` in code)",
    });
  if (record.status !== "waiting") {
    throw new DecisionError(
      `Run '${runId}' is not waiting for a decision (it is ${record.status}${record.stopReason ? `, ${record.stopReason}` : ""})`,
      {
        hint:
          record.status === "done"
            ? "The run has finished; a decision can no longer change it"
            : "The run is running in another process; decide once it has suspended",
        context: { runId },
      },
    );
  }
  const prefix = `${runId}:step:`;
  const checkpoints = (await store.listCheckpoints(record.sessionId)).filter((id) => id.startsWith(prefix));
  const loaded = await loadRunState(store, checkpoints[checkpoints.length - 1] ?? "", {});
  if (loaded.state.phase !== "suspended") {
    throw new DecisionError(`Run '${runId}' has no suspended step to decide`, {
      hint: "Its latest checkpoint is not a suspension; resume it with `keel resume <config> <checkpointId>` (`runtime.resumeRun()` in code)",
      context: { runId },
    });
  }
  return loaded;
}

/**
 * Check decisions against the suspended step a checkpoint holds. The facade checks them before it starts the run
 * and the run checks them again once it holds the session: another process may have decided meanwhile.
 */
export function checkResumeDecisions(
  loaded: LoadedRunState,
  decisions: readonly ToolDecision[],
): ToolDecision[] {
  const { state } = loaded;
  if (state.phase !== "suspended") {
    throw new DecisionError(`Run '${state.runId}' is not waiting for a decision`, {
      hint: "Decide when the run has suspended (status 'waiting')",
    });
  }
  return checkDecisions(state, decisions);
}

/** What `decide` answers when every decision was a repeat: the run as it waits. */
export function waitingResult(waiting: LoadedRunState): RunResult {
  const { record, state } = waiting;
  return {
    runId: record.runId,
    finalOutput: null,
    stopReason: "suspended",
    termination: { type: "suspended" },
    pendingToolCalls: record.pendingToolCalls,
    usage: state.usage,
    artifacts: state.artifacts,
    metadata: { agentId: record.agentId, sessionId: record.sessionId, steps: state.step },
  };
}
