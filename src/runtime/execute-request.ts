import { createRunUsage, type RunRecord, type RunResult } from "../contracts/run-types.js";
import type { RuntimeEvent } from "../contracts/runtime-event.js";
import { PermanentToolError, RunBusyError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { KeelError, toErrorDetails } from "../errors/keel-error.js";
import type { RunEventSpill } from "../events/run-event-log.js";
import { getLogger } from "../logging/logger.js";
import type { ResolvedAgent } from "../loop/resolved-agent.js";
import { checkResumeDecisions, loadForResume } from "../loop/resume/index.js";
import type { RunLoopInput } from "../loop/run-loop-input.js";
import { transitionRun } from "../loop/run-status.js";
import { runStatusOf } from "../loop/termination.js";
import { policyForRun } from "../permissions/run-policy.js";
import { RunFolder } from "../run-folders/run-folder.js";
import { immediateWritesOf } from "../sessions/in-memory-session-manager.js";
import type { SessionManager, SessionScopeOptions } from "../sessions/session-manager.js";
import { storeAsJson, storeAsJsonNow } from "../sessions/store-as-json.js";
import { StoreOutage } from "../sessions/store-outage.js";
import { waitOutStoreOutages } from "../sessions/wait-out-store-outages.js";
import type { SessionSkillSummary } from "../skills/skills-manager.js";
import { isoNow } from "../util/iso-now.js";
import type { ExecuteRequestInput } from "./execute-request-input.js";
import { notStored, persistOutcome, storeWentAway } from "./persist-outcome.js";

const preflighted = new WeakMap<ResolvedAgent, Set<string>>();

/**
 * Everything around one run loop: the run's record, the session's exclusive scope, skills and tool
 * preflight once per session, and what the run leaves in the store (messages, artifacts, its event log).
 */
export function executeRequest(given: ExecuteRequestInput): Promise<RunResult> {
  const input = withOutageWait(given);
  const { agent, request, sessionManager } = input;
  const resume = input.resume;
  // A resume is asked with no input of its own: its record keeps the input of the run it continues.
  const record = newRunRecord({
    runId: request.runId,
    agentId: agent.id,
    sessionId: request.sessionId,
    inputText: resume?.inputText ?? request.inputText,
  });
  if (request.parentRunId !== undefined) record.parentRunId = request.parentRunId;
  if (resume !== undefined && !resume.sameRun) record.parentRunId = resume.fromRunId;
  // What the run already stored (a durable run's checkpoints stored its events as it went), and its folder.
  const stored: StoredRun = { record, sequence: 0 };
  // A chain rather than an async function: a run parked on a tool then holds pending reactions here, not a
  // suspended frame (S3).
  // A run that goes on keeps its record untouched until it holds the session and knows it may go on.
  const saved = resume?.sameRun ? Promise.resolve() : sessionManager.saveRun(record);
  // Continuing a run is exclusive: whoever holds its session may be running it, so such a resume waits for the
  // session only briefly and is then refused. Decisions and the cancelling of a waiting run wait their turn:
  // nobody runs a waiting run, and a process that got there first is told apart once the session is held.
  let wait: ResumeWait | undefined;
  // As few links as will do: every link still ahead of a parked run is a pending promise it holds (S3).
  return saved
    .then(() => prepareSkills(input))
    .then((skillSummaries) => {
      const options: SessionScopeOptions = { queueSize: agent.limits.sessionQueueSize };
      if (input.reentrantToken !== undefined) options.reentrantToken = input.reentrantToken;
      if (input.generatedSession === true) options.generated = true;
      if (resume?.sameRun === true && input.decisions === undefined && input.scope.termination === null) {
        wait = new ResumeWait(request.runId, request.sessionId, resume.checkpointId);
        options.signal = wait.signal;
      }
      return sessionManager.session(
        request.sessionId,
        (session) => {
          wait?.end();
          if (input.session !== undefined) input.session.token = session.token;
          return runInSession(input, stored, { state: session.state, skillSummaries });
        },
        options,
      );
    })
    .then(
      (result) => finish(input, stored, result),
      (error: unknown) => {
        let result: RunResult;
        try {
          const busy = wait?.end();
          const refusal = error instanceof ResumeRefused ? error.error : busy;
          if (refusal !== undefined) {
            // The log ends without `run.finished`: the run never started, and its readers get the refusal.
            input.log.close(refusal);
            throw refusal;
          }
          result = failedBeforeLoop(input, error);
        } catch (thrown) {
          input.onEnd?.();
          throw thrown;
        }
        return finish(input, stored, result);
      },
    );
}

/**
 * A durable run waits out a store that stops answering (`durable.store_outage_ms`) rather than failing on it;
 * cancelling the run stops the wait. Other runs use the store as it is.
 */
function withOutageWait(input: ExecuteRequestInput): ExecuteRequestInput {
  if (input.request.durable !== true) return input;
  const outage = new StoreOutage({ outageMs: input.agent.limits.storeOutageMs, signal: input.scope.signal });
  return { ...input, sessionManager: waitOutStoreOutages(input.sessionManager, outage) };
}

/** A resume the store refused once the session was held: the request fails, the run's record is untouched. */
class ResumeRefused {
  constructor(readonly error: unknown) {}
}

/** How long a resume that continues a run waits for the run's session before it is refused as busy. */
const RESUME_SESSION_WAIT_MS = 1000;

/** A resume's bounded wait for its run's session: its signal aborts with a `RunBusyError` when time is up. */
class ResumeWait {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private ended = false;

  constructor(runId: string, sessionId: string, checkpointId: string) {
    const busy = new RunBusyError(
      `Run '${runId}' is being continued elsewhere: another process holds its session '${sessionId}'`,
      {
        hint:
          "Wait until that run finishes or suspends (`keel runs` shows its status), then resume its latest " +
          "checkpoint if it still has to go on; or pass branch: true (`keel resume --branch`) to start a new " +
          `run from '${checkpointId}'`,
        context: { runId, sessionId, checkpointId },
      },
    );
    this.timer = setTimeout(() => this.controller.abort(busy), RESUME_SESSION_WAIT_MS);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The wait is over; returns the refusal when time ran out before the session was held. */
  end(): RunBusyError | undefined {
    if (this.ended) return undefined;
    this.ended = true;
    clearTimeout(this.timer);
    const { signal } = this.controller;
    return signal.aborted ? (signal.reason as RunBusyError) : undefined;
  }
}

/** A run's record, and what of it the store already holds: its last stored sequence, and its folder. */
interface StoredRun {
  readonly record: RunRecord;
  sequence: number;
  folder?: RunFolder;
}

function runInSession(
  input: ExecuteRequestInput,
  stored: StoredRun,
  session: {
    state: Record<string, unknown>;
    skillSummaries: Record<string, SessionSkillSummary> | undefined;
  },
): Promise<RunResult> {
  const { record } = stored;
  const { state: sessionState, skillSummaries } = session;
  // A run that goes on takes its status from its store once it has read it there.
  if (input.resume?.sameRun !== true) record.status = transitionRun(record.status, "running");
  // Run folders: made once the run holds its session; a folder that cannot be made fails the run.
  const folders = input.agent.runFolders;
  if (folders !== undefined) stored.folder = new RunFolder(folders.rootDir, input.request.runId).open();
  spillEvents(input, stored);
  const loopInput: RunLoopInput = {
    agent: input.agent,
    request: input.request,
    log: input.log,
    scope: input.scope,
    sessionManager: input.sessionManager,
    sessionState,
    onSuspended: (result) => storeWaiting(input, record, result),
  };
  const { policy, policyInput } = input.agent;
  const runPolicy = policyForRun(
    policy !== undefined && policyInput !== undefined ? { policy, policyInput } : undefined,
    skillSummaries,
    sessionState,
  );
  if (runPolicy !== undefined) loopInput.policy = runPolicy;
  if (skillSummaries !== undefined) loopInput.skillSummaries = skillSummaries;
  if (stored.folder !== undefined) loopInput.runFolder = stored.folder;
  const resume = input.resume;
  let ready: Promise<unknown> | undefined;
  if (resume !== undefined) {
    ready = loadForResume(input.sessionManager, resume, {
      agent: input.agent,
      runId: input.request.runId,
    }).then(
      (found) => {
        if (input.decisions !== undefined)
          loopInput.decisions = checkResumeDecisions(found.loaded, input.decisions);
        loopInput.resume = found.loaded;
        loopInput.stored = found.stored;
        stored.sequence = found.stored.sequence;
        if (resume.sameRun) {
          record.createdAt = found.loaded.record.createdAt;
          // The run goes on from the status its store holds (waiting, or running after a crash).
          record.status = transitionRun(found.loaded.record.status, "running");
        }
        return input.sessionManager.saveRun(record);
      },
      (error: unknown) => {
        throw new ResumeRefused(error);
      },
    );
  } else if (input.request.durable === true) {
    // A durable run's record says `running` while it runs: after a crash, that is how `keel runs` finds it.
    ready = input.sessionManager.saveRun(record);
  }
  if (input.agent.preflightTools.length > 0)
    ready = ready === undefined ? preflight(input) : ready.then(() => preflight(input));
  const outcome =
    ready === undefined ? input.runtime.run(loopInput) : ready.then(() => input.runtime.run(loopInput));
  return outcome.then((finished) => {
    stored.sequence = finished.storedSequence;
    return persistOutcome(input, finished);
  });
}

/**
 * A suspended run's record, stored before the run finishes: a decision, here or in another process, finds the
 * run by it. A record that cannot be stored leaves a run nobody can decide, so the run fails with that error
 * (its result, `run.failed` and the stream say so) rather than claiming to wait.
 */
async function storeWaiting(input: ExecuteRequestInput, record: RunRecord, result: RunResult): Promise<void> {
  const { request, sessionManager } = input;
  record.status = transitionRun(record.status, runStatusOf(result.termination));
  record.stopReason = result.stopReason;
  record.termination = result.termination;
  record.pendingToolCalls = result.pendingToolCalls;
  record.updatedAt = isoNow();
  record.lastSequence = input.log.lastSequence;
  try {
    await storeAsJson({
      runId: request.runId,
      what: "record",
      values: record,
      write: (safe) => sessionManager.saveRun(safe),
    });
  } catch (thrown) {
    const error = new KeelError(
      `Run ${request.runId} waits for decisions, but its record could not be stored: ${(thrown as Error)?.message}`,
      {
        code: KeelError.isInstance(thrown) ? thrown.code : ERROR_CODES.STORE_QUERY,
        hint:
          "The run cannot be decided later; check that the session store is reachable and writable, then " +
          "run the request again",
        retryable: KeelError.isInstance(thrown) ? thrown.retryable : false,
        cause: thrown,
        context: { agentId: input.agent.id, sessionId: request.sessionId, runId: request.runId },
      },
    );
    getLogger().error(error.message, { runId: request.runId, cause: thrown });
    result.stopReason = "failed";
    result.termination = { type: "error", value: error.message };
    result.pendingToolCalls = [];
    result.error = error.message;
    result.errorDetails = toErrorDetails(error);
    result.exception = error;
  }
}

/**
 * Close the log and store the run's events and final record; then the run is over (`onEnd`). Done when it
 * returns when nothing is to be waited for (no spill under way, the in-memory store's own writes).
 */
function finish(
  input: ExecuteRequestInput,
  stored: StoredRun,
  result: RunResult,
): RunResult | Promise<RunResult> {
  let finished: RunResult | Promise<RunResult>;
  try {
    input.log.close();
    // A batch of events still on its way to the store lands before the rest, so the store's log stays in order.
    finished = input.log.spilling
      ? input.log.settled().then(() => storeFinished(input, stored, result))
      : storeFinished(input, stored, result);
  } catch (error) {
    input.onEnd?.();
    throw error;
  }
  if (!(finished instanceof Promise)) {
    input.onEnd?.();
    return finished;
  }
  return finished.then(
    (value) => {
      input.onEnd?.();
      return value;
    },
    (error: unknown) => {
      input.onEnd?.();
      throw error;
    },
  );
}

/** The run's record as it ends, then its events and record stored: at once with immediate writes. */
function storeFinished(
  input: ExecuteRequestInput,
  stored: StoredRun,
  result: RunResult,
): RunResult | Promise<RunResult> {
  const { record } = stored;
  const { log } = input;
  const storedSequence = stored.sequence;
  if (stored.folder !== undefined) {
    stored.folder.writeEvents(log.eventsAfter(log.spilledSequence));
    stored.folder.close();
  }
  // A suspended run's record already went to waiting before run.finished; only a change is a transition.
  const status = runStatusOf(result.termination);
  if (record.status !== status) record.status = transitionRun(record.status, status);
  record.stopReason = result.stopReason;
  record.termination = result.termination;
  record.pendingToolCalls = result.pendingToolCalls;
  record.updatedAt = isoNow();
  record.lastSequence = log.lastSequence;
  // The store still holds the run as `running` at its latest checkpoint: left so, the run can be resumed.
  if (storeWentAway(result)) return result;
  const writes = immediateWritesOf(input.sessionManager);
  if (writes === undefined) return storeRunInTime(input, stored, result);
  const { runId } = input.request;
  try {
    // The events' array is made here for the store, and the record is not changed again: both are kept as they are.
    storeAsJsonNow(runId, "events", log.eventsAfter(storedSequence), (events) =>
      writes.appendOwnEvents(runId, events),
    );
    storeAsJsonNow(runId, "record", record, writes.saveFinalRun);
  } catch (error) {
    notStored(result, `run ${input.request.runId}`, error);
  }
  return result;
}

/** The run's events and final record through the store's promises. */
async function storeRunInTime(
  input: ExecuteRequestInput,
  stored: StoredRun,
  result: RunResult,
): Promise<RunResult> {
  const { log, request, sessionManager } = input;
  const { record, sequence: storedSequence } = stored;
  try {
    await storeAsJson({
      runId: request.runId,
      what: "events",
      values: log.eventsAfter(storedSequence),
      write: (events) => sessionManager.appendEvents(request.runId, events),
    });
    await storeAsJson({
      runId: request.runId,
      what: "record",
      values: record,
      write: (safe) => sessionManager.saveRun(safe),
    });
  } catch (error) {
    notStored(result, `run ${input.request.runId}`, error);
  }
  return result;
}

/**
 * Bound the live log by the agent's `event_queue_size`: older events go to the store's event log (and the run
 * folder's `events.jsonl`) while the run goes on, where a consumer that falls behind reads them.
 */
function spillEvents(input: ExecuteRequestInput, stored: { folder?: RunFolder }): void {
  input.log.spillTo(new StoreSpill(input, stored));
}

/** A live log's spill into the store, as one object with methods rather than closures: every parked run holds one. */
class StoreSpill implements RunEventSpill {
  readonly limit: number;
  private readonly sessionManager: SessionManager;
  private readonly runId: string;

  constructor(
    input: ExecuteRequestInput,
    private readonly stored: { folder?: RunFolder },
  ) {
    this.limit = input.agent.limits.eventQueueSize;
    this.sessionManager = input.sessionManager;
    this.runId = input.request.runId;
  }

  async append(events: readonly RuntimeEvent[]): Promise<void> {
    await this.sessionManager.appendEvents(this.runId, events);
    this.stored.folder?.writeEvents(events);
  }

  load(afterSequence: number): Promise<RuntimeEvent[]> {
    return this.sessionManager.loadEvents(this.runId, { afterSequence });
  }
}

/** The skills manager caches per session; calling it each run is what lets `rescan()` reach live sessions. */
async function prepareSkills(input: ExecuteRequestInput): Promise<Record<string, SessionSkillSummary>> {
  return input.skills.prepareSession(input.request.sessionId, input.sessionManager);
}

/** Each tool's `preflight` once per session before its first turn; a failure ends the run before the loop. */
async function preflight(input: ExecuteRequestInput): Promise<void> {
  const { agent, request, log } = input;
  if (agent.preflightTools.length === 0) return;
  let done = preflighted.get(agent);
  if (!done) {
    done = new Set();
    preflighted.set(agent, done);
  }
  if (done.has(request.sessionId)) return;
  for (const [toolId, tool] of agent.preflightTools) {
    const startedAt = performance.now();
    try {
      await tool.preflight?.({
        agentId: agent.id,
        sessionId: request.sessionId,
        runId: request.runId,
        // What a tool's preflight does (an MCP server listing its tools) is in the run's log too.
        emitEvent: (kind: string, payload: Record<string, unknown>) => log.emit(kind, payload),
      } as never);
      log.emit("tool.preflight", { toolId, result: "ok", durationMs: performance.now() - startedAt });
    } catch (error) {
      log.emit("tool.preflight", {
        toolId,
        result: "error",
        error: (error as Error).message,
        durationMs: performance.now() - startedAt,
      });
      throw new PermanentToolError(`[tool:${toolId}] ${(error as Error).message}`, {
        cause: error,
        hint:
          (error as KeelError).hint ??
          `Tool '${toolId}' failed its preflight check; fix its config or environment`,
        context: { toolId, agentId: agent.id, sessionId: request.sessionId, runId: request.runId },
      });
    }
  }
  done.add(request.sessionId);
}

/** A run that could not reach its loop (queue full, preflight failed, store down) still ends with a result. */
function failedBeforeLoop(input: ExecuteRequestInput, thrown: unknown): RunResult {
  const error = KeelError.isInstance(thrown)
    ? thrown
    : new KeelError((thrown as Error)?.message ?? String(thrown), { code: "error.unknown", cause: thrown });
  const { log, request, agent } = input;
  const result = failedResult(error, {
    runId: request.runId,
    agentId: agent.id,
    sessionId: request.sessionId,
  });
  if (log.lastSequence === 0) log.emit("run.started", { resumed: false });
  log.emit("run.failed", { error: result.error, errorDetails: result.errorDetails });
  log.emit("run.finished", { result });
  return result;
}

/** A new run's record, `created`. */
export function newRunRecord(run: {
  runId: string;
  agentId: string;
  sessionId: string;
  inputText?: string;
}): RunRecord {
  const now = isoNow();
  const { runId, agentId, sessionId, inputText } = run;
  return {
    runId,
    agentId,
    sessionId,
    ...(inputText === undefined || inputText === "" ? {} : { inputText }),
    status: "created",
    pendingToolCalls: [],
    createdAt: now,
    updatedAt: now,
    lastSequence: 0,
  };
}

/** The result of a run that failed with `error` before it did anything else. */
export function failedResult(
  error: KeelError,
  run: { runId: string; agentId: string; sessionId: string },
): RunResult {
  return {
    runId: run.runId,
    finalOutput: null,
    stopReason: "failed",
    termination: { type: "error", value: error.message },
    pendingToolCalls: [],
    usage: createRunUsage(),
    artifacts: [],
    error: error.message,
    errorDetails: toErrorDetails(error),
    exception: error,
    metadata: { agentId: run.agentId, sessionId: run.sessionId, steps: 0 },
  };
}
