import { ConfigError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import type { StoredMarks } from "../loop/checkpoint-writer.js";
import { type LoadedRunState, loadRunState } from "../loop/load-run-state.js";
import { parseCheckpointId } from "../loop/run-state.js";
import type { SessionManager } from "../sessions/session-manager.js";
import type { ResolvedAgent } from "./resolved-agent.js";

/**
 * A resume (DR-3) as the run's start sees it. The run's latest checkpoint continues the run itself (same run id,
 * its event log goes on); an earlier checkpoint branches a new run from that point, so the original's later
 * checkpoints stay valid.
 */
export interface PreparedResume {
  checkpointId: string;
  /** True: the checkpoint's own run goes on. False: a new run starts from the checkpoint. */
  sameRun: boolean;
  /** The checkpoint's run. */
  fromRunId: string;
  sessionId: string;
  /** The last event sequence the store holds for the run that goes on (0 for a branch). */
  startAfter: number;
  /** Whether the checkpoint's run was durable. */
  durable: boolean;
  /** The run's input. */
  inputText: string;
}

/** Check a resume before the run starts: the checkpoint exists, fits the agent, and its run may go on. */
export async function prepareResume(
  store: SessionManager,
  checkpointId: string,
  agent: ResolvedAgent,
  requestedRunId: string | undefined,
): Promise<PreparedResume> {
  const loaded = await loadRunState(store, checkpointId, {
    agentId: agent.id,
    fingerprint: agent.fingerprint,
  });
  const fromRunId = loaded.state.runId;
  const sameRun = loaded.latest && (requestedRunId === undefined || requestedRunId === fromRunId);
  if (sameRun) checkResumable(loaded);
  const events = sameRun ? await store.loadEvents(fromRunId) : [];
  return {
    checkpointId,
    sameRun,
    fromRunId,
    sessionId: loaded.state.sessionId,
    startAfter: events.length === 0 ? 0 : events[events.length - 1]!.sequence,
    durable: loaded.state.durable === true,
    inputText: loaded.state.inputText,
  };
}

/**
 * Inside the session's scope, read the checkpoint again — another process may have moved the run on while this
 * one waited — and say what the store already holds of the run that goes on.
 */
export async function loadForResume(
  store: SessionManager,
  prepared: PreparedResume,
  agent: ResolvedAgent,
  runId: string,
): Promise<{ loaded: LoadedRunState; stored: StoredMarks }> {
  const loaded = await loadRunState(store, prepared.checkpointId, {
    agentId: agent.id,
    fingerprint: agent.fingerprint,
  });
  if (!prepared.sameRun) {
    loaded.state = { ...loaded.state, runId };
    return { loaded, stored: { checkpoints: 0, messages: 0, sequence: 0, latestCheckpointId: null } };
  }
  if (!loaded.latest) {
    throw new ConfigError(
      `Run '${runId}' moved past checkpoint '${prepared.checkpointId}' while this resume waited`,
      {
        code: ERROR_CODES.RUN_NOT_RESUMABLE,
        hint: `Resume its latest checkpoint, ${loaded.runCheckpoints[loaded.runCheckpoints.length - 1]}`,
      },
    );
  }
  checkResumable(loaded);
  const counters = loaded.runCheckpoints.map((id) => parseCheckpointId(id)?.n ?? 0);
  return {
    loaded,
    stored: {
      checkpoints: Math.max(0, ...counters),
      messages: loaded.state.transcriptLength,
      sequence: prepared.startAfter,
      latestCheckpointId: prepared.checkpointId,
    },
  };
}

/** A finished run does not go on; its earlier checkpoints can still be branched from. */
function checkResumable(loaded: LoadedRunState): void {
  if (loaded.record.status !== "done") return;
  throw new ConfigError(
    `Run '${loaded.record.runId}' already finished (${loaded.record.stopReason ?? "done"}); it cannot go on`,
    {
      code: ERROR_CODES.RUN_NOT_RESUMABLE,
      hint:
        loaded.runCheckpoints.length > 1
          ? `Resume an earlier checkpoint to branch a new run from it: ${loaded.runCheckpoints.slice(0, -1).join(", ")}`
          : "Start a new run",
    },
  );
}
