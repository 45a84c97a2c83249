import { ConfigError } from "../../errors/error-classes.js";
import { ERROR_CODES } from "../../errors/error-codes.js";
import type { CheckpointStore, RunStore } from "../../sessions/session-manager.js";
import type { StoredMarks } from "../checkpoint-writer.js";
import type { ResolvedAgent } from "../resolved-agent.js";
import { parseCheckpointId } from "../run-state.js";
import { type LoadedRunState, loadRunState } from "./load-run-state.js";

/**
 * A resume as the run's start sees it. The run's latest checkpoint continues the run itself (same run id,
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

/** What the request asks of a resume: a run id of its own, or an explicit branch. */
export interface ResumeRequest {
  /** The checkpoint the run goes on from. */
  checkpointId: string;
  runId?: string | undefined;
  branch?: boolean | undefined;
}

/**
 * Check a resume before the run starts: the checkpoint exists, fits the agent, and its run may go on. A resume
 * branches only when asked to (`branch`, or a `runId` other than the checkpoint's run): a checkpoint the run has
 * gone past is refused rather than silently branched, since whoever moved the run on may be running it still.
 */
export async function prepareResume(
  store: CheckpointStore & RunStore,
  agent: ResolvedAgent,
  request: ResumeRequest,
): Promise<PreparedResume> {
  const { checkpointId } = request;
  const loaded = await loadRunState(store, checkpointId, {
    agentId: agent.id,
    fingerprint: agent.fingerprint,
  });
  const fromRunId = loaded.state.runId;
  const sameRun = request.branch !== true && (request.runId === undefined || request.runId === fromRunId);
  if (sameRun) checkContinuable(loaded);
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
  store: CheckpointStore & RunStore,
  prepared: PreparedResume,
  target: { agent: ResolvedAgent; runId: string },
): Promise<{ loaded: LoadedRunState; stored: StoredMarks }> {
  const { agent, runId } = target;
  const loaded = await loadRunState(store, prepared.checkpointId, {
    agentId: agent.id,
    fingerprint: agent.fingerprint,
  });
  if (!prepared.sameRun) {
    loaded.state = { ...loaded.state, runId };
    return { loaded, stored: { checkpoints: 0, messages: 0, sequence: 0, latestCheckpointId: null } };
  }
  checkContinuable(loaded);
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

const BRANCH_HINT = "pass branch: true (`keel resume --branch`)";

/**
 * Only a run's latest checkpoint continues it, and only while the run has not finished; its other checkpoints
 * can still be branched from.
 */
function checkContinuable(loaded: LoadedRunState): void {
  const { record, checkpointId, runCheckpoints } = loaded;
  const runId = record.runId;
  if (!loaded.latest) {
    const latest = runCheckpoints[runCheckpoints.length - 1];
    const finished = record.status === "done";
    throw new ConfigError(
      finished
        ? `Run '${runId}' went on past checkpoint '${checkpointId}' and finished (${record.stopReason ?? "done"})`
        : `Run '${runId}' went on past checkpoint '${checkpointId}' (its latest is '${latest}')`,
      {
        code: ERROR_CODES.RUN_NOT_RESUMABLE,
        hint: finished
          ? `To start a new run from '${checkpointId}', ${BRANCH_HINT}`
          : `Resume its latest checkpoint, ${latest}, to continue the run once no process is running it ` +
            `(\`keel runs\` shows its status); or, to start a new run from '${checkpointId}', ${BRANCH_HINT}`,
        context: { runId, checkpointId },
      },
    );
  }
  if (record.status !== "done") return;
  throw new ConfigError(`Run '${runId}' already finished (${record.stopReason ?? "done"}); it cannot go on`, {
    code: ERROR_CODES.RUN_NOT_RESUMABLE,
    hint:
      runCheckpoints.length > 1
        ? `To start a new run from one of its checkpoints (${runCheckpoints.join(", ")}), ${BRANCH_HINT}`
        : `Start a new run, or ${BRANCH_HINT} to start one from ${checkpointId}`,
    context: { runId, checkpointId },
  });
}

/**
 * The session a resumed run runs in: a run that goes on stays in its checkpoint's session (asking for another is a
 * `ConfigError`); a branch may name another, and otherwise stays there too.
 */
export function resumeSessionId(resume: PreparedResume, requested: string | undefined): string {
  if (resume.sameRun && requested !== undefined && requested !== resume.sessionId) {
    throw new ConfigError(
      `Checkpoint '${resume.checkpointId}' belongs to session '${resume.sessionId}', not '${requested}'`,
      {
        hint: "Leave sessionId out when resuming a run, or give a new runId to branch into another session",
      },
    );
  }
  return requested ?? resume.sessionId;
}
