import type { RunRecord, RunRequest } from "../contracts/run-types.js";
import { ConfigError } from "../errors/error-classes.js";
import type { ToolDecision } from "../loop/decisions.js";
import { checkResumeDecisions, loadSuspension } from "../loop/resume/index.js";
import type { RunQueue } from "../queue/run-queue.js";
import type { SessionManager } from "../sessions/session-manager.js";
import { newRunRecord } from "./execute-request.js";

/**
 * Put a run on the queue. Its record is stored first, as `created`, so the run can be read, followed and
 * cancelled from any node the moment its id is known, before any worker has taken it.
 */
export async function submitRun(
  store: SessionManager,
  queue: RunQueue,
  request: RunRequest & { agentId: string; runId: string; sessionId: string },
): Promise<void> {
  if (request.resumeFromCheckpoint !== undefined || request.outputType !== undefined || request.signal)
    throw new ConfigError("A queued run is a plain request: agentId, inputText, runId, sessionId, durable", {
      hint: "Resume, output types and signals apply to runs started in this process (runDetailed, stream)",
    });
  const record = newRunRecord(request);
  if ((await store.getRun(request.runId)) !== null)
    throw new ConfigError(`Run '${request.runId}' already exists`, { hint: "Use a new runId" });
  await store.saveRun(record);
  await queue.enqueue({
    kind: "start",
    runId: request.runId,
    agentId: request.agentId,
    sessionId: request.sessionId,
    inputText: request.inputText,
    // A run another process executes must be resumable there: it checkpoints as it goes.
    durable: queue.distributed ? true : request.durable,
  });
}

/**
 * Put decisions on a waiting run on the queue, checked first against its suspension (a refusal is a
 * `DecisionError` here, before anything is queued). Resolves with the run's record as it waited.
 */
export async function submitDecisions(
  store: SessionManager,
  queue: RunQueue,
  request: { runId: string; decisions: readonly ToolDecision[] },
): Promise<RunRecord> {
  const waiting = await loadSuspension(store, request.runId);
  checkResumeDecisions(waiting, request.decisions);
  const { record } = waiting;
  await queue.enqueue({
    kind: "decide",
    runId: record.runId,
    agentId: record.agentId,
    sessionId: record.sessionId,
    inputText: "",
    decisions: [...request.decisions],
  });
  return record;
}
