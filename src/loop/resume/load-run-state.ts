import type { Message } from "../../contracts/message.js";
import type { RunRecord } from "../../contracts/run-types.js";
import { ConfigError } from "../../errors/error-classes.js";
import { ERROR_CODES } from "../../errors/error-codes.js";
import { KeelError } from "../../errors/keel-error.js";
import {
  type CheckpointStore,
  type RunStore,
  SESSION_SCHEMA_VERSION,
} from "../../sessions/session-manager.js";
import { parseCheckpointId, RUN_STATE_SCHEMA_VERSION, type RunState } from "../run-state.js";

/** A checkpoint read back: its state, the transcript it covers, and the run it belongs to. */
export interface LoadedRunState {
  checkpointId: string;
  /** The counter of the checkpoint (`<runId>:step:<n>`). */
  n: number;
  state: RunState;
  transcript: Message[];
  record: RunRecord;
  /** Whether this is the run's latest checkpoint (only the latest continues the run itself). */
  latest: boolean;
  /** The run's checkpoint ids, oldest first. */
  runCheckpoints: string[];
}

/**
 * Rebuild a run's state from the store alone: the checkpoint, then the run transcript up to its length.
 * An unknown id, another schema version, another agent shape or a transcript shorter than the checkpoint says
 * is refused with a typed error naming what to do; nothing is half-loaded.
 */
export async function loadRunState(
  store: CheckpointStore & RunStore,
  checkpointId: string,
  expected: { agentId?: string; fingerprint?: string } = {},
): Promise<LoadedRunState> {
  const parsed = parseCheckpointId(checkpointId);
  if (parsed === null) {
    throw new ConfigError(`'${checkpointId}' is not a run checkpoint id`, {
      code: ERROR_CODES.CHECKPOINT_UNKNOWN,
      hint: "Run checkpoint ids look like '<runId>:step:<n>'; `keel checkpoints <config> <runId>` lists a run's",
    });
  }
  const record = await store.getRun(parsed.runId);
  if (record === null) {
    throw new ConfigError(`Unknown checkpoint '${checkpointId}': the store has no run '${parsed.runId}'`, {
      code: ERROR_CODES.CHECKPOINT_UNKNOWN,
      hint: "Resume against the store the run was written to; `keel runs` lists its runs",
    });
  }
  const sessionCheckpoints = await store.listCheckpoints(record.sessionId);
  const prefix = `${parsed.runId}:step:`;
  const runCheckpoints = sessionCheckpoints.filter((id) => id.startsWith(prefix));
  const checkpoint = await store.loadCheckpoint(record.sessionId, checkpointId);
  if (checkpoint === null) {
    throw new ConfigError(`Unknown checkpoint '${checkpointId}' in session '${record.sessionId}'`, {
      code: ERROR_CODES.CHECKPOINT_UNKNOWN,
      hint: `The session's checkpoints: ${sessionCheckpoints.join(", ") || "none"}`,
    });
  }
  const state = checkpoint.state as unknown as RunState;
  if (
    checkpoint.schemaVersion !== SESSION_SCHEMA_VERSION ||
    state.schemaVersion !== RUN_STATE_SCHEMA_VERSION
  ) {
    throw new ConfigError(
      `Checkpoint '${checkpointId}' has schema version ${state.schemaVersion ?? checkpoint.schemaVersion}; ` +
        `this Keel reads version ${RUN_STATE_SCHEMA_VERSION}`,
      {
        code: ERROR_CODES.CHECKPOINT_SCHEMA,
        hint: "Resume it with the Keel version that wrote it, or start a new run",
      },
    );
  }
  if (typeof state.runId !== "string" || typeof state.phase !== "string" || !Array.isArray(state.toolCalls)) {
    throw new ConfigError(`Checkpoint '${checkpointId}' does not hold a run state`, {
      code: ERROR_CODES.CHECKPOINT_INVALID,
      hint: "Only checkpoints a run wrote ('<runId>:step:<n>') can be resumed",
    });
  }
  if (expected.agentId !== undefined && state.agentId !== expected.agentId) {
    throw new ConfigError(
      `Checkpoint '${checkpointId}' belongs to agent '${state.agentId}', not '${expected.agentId}'`,
      { code: ERROR_CODES.CHECKPOINT_MISMATCH, hint: `Resume it with agentId '${state.agentId}'` },
    );
  }
  if (expected.fingerprint !== undefined && state.fingerprint !== expected.fingerprint) {
    throw new ConfigError(
      `Checkpoint '${checkpointId}' was written by agent '${state.agentId}' with other tools, pattern or model`,
      {
        code: ERROR_CODES.CHECKPOINT_MISMATCH,
        hint:
          "A run resumes only with the tools (names and schemas), pattern and model it started with; restore " +
          "that agent definition, or start a new run",
        context: { agentId: state.agentId, runId: state.runId },
      },
    );
  }
  const transcript = await store.loadRunMessages(state.runId, { length: state.transcriptLength });
  if (transcript.length !== state.transcriptLength) {
    throw new KeelError(
      `Checkpoint '${checkpointId}' covers ${state.transcriptLength} messages but the store holds ` +
        `${transcript.length} for run '${state.runId}'`,
      {
        code: ERROR_CODES.STORE_CORRUPT,
        hint: "The run's transcript was removed or truncated; resume an earlier checkpoint",
        context: { runId: state.runId },
      },
    );
  }
  return {
    checkpointId,
    n: parsed.n,
    state,
    transcript,
    record,
    latest: runCheckpoints[runCheckpoints.length - 1] === checkpointId,
    runCheckpoints,
  };
}
