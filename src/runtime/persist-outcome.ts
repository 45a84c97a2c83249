import { isDeepStrictEqual } from "node:util";
import type { Message } from "../contracts/message.js";
import type { RunArtifact, RunResult } from "../contracts/run-types.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { KeelError } from "../errors/keel-error.js";
import { getLogger } from "../logging/logger.js";
import type { RunLoopOutcome } from "../loop/run-loop-input.js";
import { immediateWritesOf } from "../sessions/in-memory-session-manager.js";
import type { SessionManager } from "../sessions/session-manager.js";
import { storeAsJson, storeAsJsonNow } from "../sessions/store-as-json.js";
import type { ExecuteRequestInput } from "./execute-request-input.js";

/**
 * What a finished run leaves in its session. A store failure here is logged; the run's result stands. With the
 * in-memory store's own writes it is done when it returns: no promise, no suspended frame.
 */
export function persistOutcome(
  input: ExecuteRequestInput,
  outcome: RunLoopOutcome,
): RunResult | Promise<RunResult> {
  const { result } = outcome;
  if (result.stopReason === "suspended" || storeWentAway(result)) return result;
  // A resumed run first reads what its dead process stored: that is the store's to answer in its own time.
  const writes = input.resume?.sameRun === true ? undefined : immediateWritesOf(input.sessionManager);
  if (writes === undefined) return persistOutcomeInTime(input, outcome);
  const { request } = input;
  const { runId, sessionId } = request;
  try {
    const from = transcriptToStore(outcome);
    if (from !== null)
      storeAsJsonNow(runId, "transcript", outcome.context.transcript.slice(from), (tail) =>
        writes.saveRunMessages(runId, from, tail),
      );
    const messages = outcome.newMessages;
    if (messages.length > 0)
      storeAsJsonNow(runId, "messages", messages, (safe) => writes.appendMessages(sessionId, safe));
    for (const artifact of result.artifacts)
      storeAsJsonNow(runId, "artifact", artifact, (safe) => writes.saveArtifact(sessionId, safe));
  } catch (error) {
    notStored(result, `the messages of run ${input.request.runId}`, error);
  }
  return result;
}

/**
 * Where the run's transcript is to be stored from, or null: a run that checkpointed keeps its run transcript
 * whole, the messages after its last checkpoint too.
 */
function transcriptToStore(outcome: RunLoopOutcome): number | null {
  const stored = outcome.storedMessages;
  const length = outcome.context.transcript.length;
  return stored !== null && stored !== length ? Math.min(stored, length) : null;
}

/** A store write of the run's end failed: logged, and noted on the result, which stands. */
export function notStored(result: RunResult, what: string, error: unknown): void {
  getLogger().error(`Could not store ${what}: ${(error as Error).message}`);
  result.metadata.storeError = (error as Error).message;
}

/** {@link persistOutcome} through the store's promises. */
async function persistOutcomeInTime(input: ExecuteRequestInput, outcome: RunLoopOutcome): Promise<RunResult> {
  const { result } = outcome;
  const { sessionManager, request } = input;
  try {
    const from = transcriptToStore(outcome);
    if (from !== null) {
      await storeAsJson({
        runId: request.runId,
        what: "transcript",
        values: outcome.context.transcript.slice(from),
        write: (tail) => sessionManager.saveRunMessages(request.runId, from, tail),
      });
    }
    let messages = outcome.newMessages;
    let artifacts = result.artifacts;
    if (
      input.resume?.sameRun === true &&
      (await sessionEndsWith(sessionManager, request.sessionId, messages))
    ) {
      messages = [];
      artifacts = artifacts.slice(await storedArtifacts(sessionManager, request.sessionId, artifacts));
    }
    if (messages.length > 0)
      await storeAsJson({
        runId: request.runId,
        what: "messages",
        values: messages,
        write: (safe) => sessionManager.appendMessages(request.sessionId, safe),
      });
    for (const artifact of artifacts)
      await storeAsJson({
        runId: request.runId,
        what: "artifact",
        values: artifact,
        write: (safe) => sessionManager.saveArtifact(request.sessionId, safe),
      });
  } catch (error) {
    notStored(result, `the messages of run ${input.request.runId}`, error);
  }
  return result;
}

/**
 * Whether the session already ends with a resumed run's messages: the process that ran it died after giving
 * them to the session and before its final record was stored, so the run was resumed from its last checkpoint.
 * They are not appended twice. (The run held the session until it died, so nothing of that run's time follows
 * them; only a run of the same session between the crash and the resume would hide them from this check.)
 */
async function sessionEndsWith(
  store: SessionManager,
  sessionId: string,
  messages: readonly Message[],
): Promise<boolean> {
  if (messages.length === 0) return false;
  const stored = await store.loadMessages(sessionId);
  if (stored.length < messages.length) return false;
  return isDeepStrictEqual(stored.slice(-messages.length), asStored(messages));
}

/** How many of a resumed run's artifacts its dead process saved (the session's artifacts end with them). */
async function storedArtifacts(
  store: SessionManager,
  sessionId: string,
  artifacts: readonly RunArtifact[],
): Promise<number> {
  if (artifacts.length === 0) return 0;
  const stored = await store.listArtifacts(sessionId);
  const ours = asStored(artifacts);
  for (let count = Math.min(ours.length, stored.length); count > 0; count--) {
    if (isDeepStrictEqual(stored.slice(-count), ours.slice(0, count))) return count;
  }
  return 0;
}

/** Values as a store gives them back (no `undefined` properties). */
function asStored<T>(values: readonly T[]): T[] {
  return JSON.parse(JSON.stringify(values)) as T[];
}

/** True when the run stopped because its store stayed away: what it leaves is written when it is resumed. */
export function storeWentAway(result: RunResult): boolean {
  return KeelError.isInstance(result.exception) && result.exception.code === ERROR_CODES.STORE_UNAVAILABLE;
}
