// Checkpoint lookups the facade answers from the store: a run's checkpoints, and the agent a checkpoint belongs to.
import { ConfigError, UnknownRunError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { parseCheckpointId } from "../loop/run-state.js";
import type { CheckpointStore, RunStore } from "../sessions/session-manager.js";

/** A run's checkpoint ids, oldest first; a typed error for a run the store does not know. */
export async function checkpointsOfRun(
  sessions: CheckpointStore & RunStore,
  runId: string,
): Promise<string[]> {
  const record = await sessions.getRun(runId);
  if (record === null)
    throw new UnknownRunError(`Unknown run '${runId}'`, {
      hint: "`keel runs <config>` lists the runs the store knows (`runtime.listRuns()` in code)",
    });
  const prefix = `${runId}:step:`;
  return (await sessions.listCheckpoints(record.sessionId)).filter((id) => id.startsWith(prefix));
}

/** The agent whose run wrote the checkpoint; a typed error for an id that is malformed or unknown. */
export async function agentOfCheckpoint(
  sessions: CheckpointStore & RunStore,
  checkpointId: string,
): Promise<string> {
  const parsed = parseCheckpointId(checkpointId);
  const record = parsed === null ? null : await sessions.getRun(parsed.runId);
  if (record === null) {
    throw new ConfigError(`Unknown checkpoint '${checkpointId}'`, {
      code: ERROR_CODES.CHECKPOINT_UNKNOWN,
      hint: "Run checkpoint ids look like '<runId>:step:<n>'; `keel checkpoints <config> <runId>` lists a run's",
    });
  }
  return record.agentId;
}
