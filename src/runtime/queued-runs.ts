import type { RunRecord, RunRequest, RunResult } from "../contracts/run-types.js";
import { RuntimeEvent } from "../contracts/runtime-event.js";
import { RunBusyError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { KeelError } from "../errors/keel-error.js";
import type { ToolDecision } from "../loop/decisions.js";
import { transitionRun } from "../loop/run-status.js";
import type { QueuedRun, QueuedRunDelivery, RunEventFanout } from "../queue/run-queue.js";
import type { SessionManager } from "../sessions/session-manager.js";
import { StoreOutage } from "../sessions/store-outage.js";
import { waitOutStoreOutages } from "../sessions/wait-out-store-outages.js";
import { failedResult, newRunRecord } from "./execute-request.js";
import { checkpointsOfRun } from "./run-checkpoints.js";

/** What executing a queued run needs of the runtime. */
export interface QueuedRunHost {
  store: SessionManager;
  fanout: RunEventFanout | undefined;
  /**
   * Start a run here; `startAfter` numbers its events after what an earlier try left in the store, and a
   * `cancelled` reason starts it cancelled.
   */
  start(request: RunRequest, startAfter: number, cancelled?: string): Promise<RunResult>;
  /** Why the run was cancelled before this worker took it, if it was. */
  cancelledBefore(runId: string): Promise<string | undefined>;
  decide(runId: string, decisions: readonly ToolDecision[]): Promise<RunResult>;
}

/** How long a worker waits for the store before and after a run it took, before the try counts as failed. */
const QUEUED_STORE_OUTAGE_MS = 60_000;

/**
 * Execute one run taken off the queue, whatever happened to it before: a first delivery starts it; a later one
 * (its worker died, hung, or the run failed for a passing reason) resumes it from its latest checkpoint — where
 * completed tool calls are not run again and a started non-idempotent call is reported as an unknown outcome —
 * or starts it over when it never reached one. A run already finished, or waiting for decisions, is left as it
 * is. After its last try it is parked as failed with the error that ended the tries. Queued runs are durable:
 * they checkpoint after every call and step, which is what another worker resumes from.
 */
export async function executeQueuedRun(
  given: QueuedRunHost,
  run: QueuedRun,
  delivery: QueuedRunDelivery,
): Promise<void> {
  // The worker's own reads and writes around the run wait for a store that went away, holding the run (its
  // lease is renewed meanwhile): failing fast would spend the run's tries in seconds, while the store restarts,
  // and leave it never ended once they were gone.
  const store = waitOutStoreOutages(given.store, new StoreOutage({ outageMs: QUEUED_STORE_OUTAGE_MS }));
  const host: QueuedRunHost = { ...given, store };
  const record = await store.getRun(run.runId);
  if (record?.status === "done") return;
  if (delivery.attempt > delivery.maxAttempts) {
    await parkFailed(host, { run, record, delivery });
    return;
  }
  if (run.kind === "decide" && record?.status === "waiting") {
    await host.decide(run.runId, run.decisions ?? []);
    return confirmStored(store, run.runId);
  }
  // A run that waits goes on only by decisions, which come as jobs of their own.
  if (record?.status === "waiting") return;
  const request: RunRequest = {
    agentId: run.agentId,
    inputText: run.inputText,
    runId: run.runId,
    sessionId: run.sessionId,
    durable: run.durable === true,
  };
  const stored = await store.loadEvents(run.runId);
  if (record === null || (record.status === "created" && stored.length === 0 && delivery.attempt === 1)) {
    await host.start(request, 0, await host.cancelledBefore(run.runId));
    return confirmStored(store, run.runId);
  }
  const lastStored = await salvageEvents(host, run.runId, stored.at(-1)?.sequence ?? 0);
  const latest = (await checkpointsOfRun(store, run.runId)).at(-1);
  // A cancellation asked for while no worker held the run (between two tries) applies as it goes on.
  const cancelled = await host.cancelledBefore(run.runId);
  if (latest !== undefined)
    await host.start({ agentId: run.agentId, inputText: "", resumeFromCheckpoint: latest }, 0, cancelled);
  else await host.start(request, lastStored, cancelled);
  return confirmStored(store, run.runId);
}

/**
 * The run is acked only once the store says it finished or waits. A run that ended while its store was away
 * (a restart) could not write that: the delivery fails, and the queue tries again after a while, which resumes
 * the run from its latest checkpoint.
 */
async function confirmStored(store: SessionManager, runId: string): Promise<void> {
  const record = await store.getRun(runId);
  if (record?.status === "done" || record?.status === "waiting") return;
  throw new KeelError(`Run ${runId} ended, but the store does not hold its end (status ${record?.status})`, {
    code: ERROR_CODES.STORE_CONNECTION,
    retryable: true,
    hint: "The queue tries the run again from its latest checkpoint once the store answers",
    context: { runId },
  });
}

/**
 * Copy into the store the events a worker published but never stored before it died (those after the store's
 * last, without a gap), so the run's log keeps them and its next try numbers its events after them: a client
 * that saw them live never sees a sequence used twice. Returns the store's last sequence after the copy.
 */
async function salvageEvents(host: QueuedRunHost, runId: string, lastStored: number): Promise<number> {
  const fanout = host.fanout;
  if (fanout === undefined) return lastStored;
  let tail: { event: RuntimeEvent }[];
  try {
    tail = await fanout.read(runId, "0");
  } catch {
    return lastStored;
  }
  const missing: RuntimeEvent[] = [];
  let next = lastStored + 1;
  for (const { event } of tail) {
    if (event.sequence < next) continue;
    if (event.sequence > next) break;
    missing.push(event);
    next++;
  }
  if (missing.length === 0) return lastStored;
  await host.store.appendEvents(runId, missing);
  return next - 1;
}

/** How long parking waits for the run's session: a process that still holds it is still running the run. */
const PARK_SESSION_WAIT_MS = 2000;

/**
 * End a run that used up its tries as failed, holding its session so no process is running it meanwhile: its
 * log gets `run.failed` and `run.finished`, its record ends failed with the error.
 */
async function parkFailed(
  host: QueuedRunHost,
  given: { run: QueuedRun; record: RunRecord | null; delivery: QueuedRunDelivery },
): Promise<void> {
  const { run, record, delivery } = given;
  const { store } = host;
  const reason = delivery.previousError ?? "its tries ended without a result";
  const error = new KeelError(
    `Run ${run.runId} was given up after ${delivery.maxAttempts} tries: ${reason}`,
    {
      code: ERROR_CODES.RUN_ATTEMPTS_EXHAUSTED,
      hint:
        "Each try ended with its worker dying or an error; the run's events show how far it got. Fix the cause " +
        "and start the run again, or raise the queue's attempts",
      context: { runId: run.runId, attempts: delivery.maxAttempts },
    },
  );
  const timeout = AbortSignal.timeout(PARK_SESSION_WAIT_MS);
  try {
    await store.session(
      run.sessionId,
      async () => {
        const stored = await store.loadEvents(run.runId);
        let sequence = await salvageEvents(host, run.runId, stored.at(-1)?.sequence ?? 0);
        const { exception: _exception, ...result } = failedResult(error, run);
        const event = (kind: string, payload: Record<string, unknown>) =>
          new RuntimeEvent(kind, payload, Date.now(), run.runId, run.sessionId, run.agentId, ++sequence);
        const events = [
          event("run.failed", { error: result.error, errorDetails: result.errorDetails }),
          event("run.finished", { result }),
        ];
        await store.appendEvents(run.runId, events);
        const base = record ?? newRunRecord(run);
        await store.saveRun({
          ...base,
          status: transitionRun(base.status, "done"),
          stopReason: "failed",
          termination: result.termination,
          pendingToolCalls: [],
          updatedAt: new Date().toISOString(),
          lastSequence: sequence,
        });
        for (const finished of events) host.fanout?.publish(finished);
      },
      { signal: timeout },
    );
  } catch (thrown) {
    if (!timeout.aborted) throw thrown;
    throw new RunBusyError(`Run '${run.runId}' is still held by another process; it is not given up`, {
      context: { runId: run.runId },
    });
  }
}
