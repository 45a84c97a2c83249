import type { RunRequest, RunResult } from "../contracts/run-types.js";
import type { RuntimeEvent } from "../contracts/runtime-event.js";
import type { ToolDecision } from "../loop/decisions.js";
import {
  checkResumeDecisions,
  type LoadedRunState,
  loadSuspension,
  waitingResult,
} from "../loop/resume/index.js";
import type { SessionManager } from "../sessions/session-manager.js";
import type { LiveRun } from "./live-runs.js";
import { type ReadOptions, RunChunkIterator, replayEvents } from "./read-run-events.js";
import type { RunStreamChunk } from "./stream-chunk.js";

/** Decisions on the suspended calls of a waiting run, keyed by tool-call id. */
export interface DecideRequest {
  runId: string;
  decisions: readonly ToolDecision[];
  /** Aborting it cancels the run once the decisions have set it going again. */
  signal?: AbortSignal | undefined;
}

/** What `stream()` takes: a run to start, or decisions that set a waiting run going again. */
export type StreamRequest<T = unknown, TDeps = unknown> = RunRequest<T, TDeps> | DecideRequest;

/** Whether a stream request decides a waiting run rather than starting one. */
export function isDecideRequest(request: StreamRequest): request is DecideRequest {
  return "decisions" in request;
}

/** What deciding needs of the runtime. */
export interface DecisionHost {
  /** The runtime's store, once its components are loaded. */
  store(): Promise<SessionManager>;
  /** The run this process executes under this id, if any. */
  live(runId: string): LiveRun | undefined;
  /** Start the continuation of a waiting run from its suspension checkpoint, with the decisions to apply. */
  start(request: RunRequest, decisions: readonly ToolDecision[]): Promise<LiveRun>;
}

/** What decisions did: set the run going again here, or nothing, when every decision was already applied. */
type Continuation = { readonly live: LiveRun } | { readonly waiting: LoadedRunState };

/**
 * Decisions on waiting runs, one batch after another per run, in this process or any other with the same store.
 * A batch resolves once it has set its run going again (or was a no-op); what the run then does is the live run's
 * result, or its stream.
 */
export class RunDecisions {
  /** Per run, the batch last queued: the next one starts once the run that batch set going has ended. */
  private readonly queued = new Map<string, Promise<unknown>>();

  constructor(private readonly host: DecisionHost) {}

  /** Apply the decisions and resolve with the run's result once it finishes or suspends again. */
  decide(request: DecideRequest): Promise<RunResult> {
    return this.apply(request).then((next) =>
      "live" in next ? next.live.done : waitingResult(next.waiting),
    );
  }

  /**
   * Apply the decisions and yield what the run does after them, as it happens: the continuation's events —
   * its `tool.decision` events among the first — to its `run.finished`. The decisions go in at the first
   * `next()`; one that is refused (`DecisionError`) rejects there, before any chunk. Decisions that were all
   * applied before (repeated `decisionId`s) change nothing: the stream is the run's last `run.finished`, which
   * says it still waits.
   */
  async *stream(
    request: DecideRequest,
    options: Pick<ReadOptions, "kinds"> = {},
  ): AsyncGenerator<RunStreamChunk> {
    const next = await this.apply(request);
    if ("live" in next) {
      // A continuation refused when it came to run rejects its result too; its stream reports the refusal.
      next.live.done.catch(noop);
      yield* new RunChunkIterator(next.live.log, options);
      return;
    }
    const store = await this.host.store();
    const events = await store.loadEvents(request.runId);
    yield* replayEvents(lastFinished(events), options);
  }

  /** Queue a batch behind the run's previous one; resolves once the run goes on (or the batch was a no-op). */
  private apply(request: DecideRequest): Promise<Continuation> {
    const { runId } = request;
    const previous = this.queued.get(runId);
    const started = (previous ?? Promise.resolve()).then(() => this.continueRun(request));
    const ended = started.then((next) => ("live" in next ? next.live.done : undefined));
    // Only the order matters to the next batch: whatever this one ends with, that one goes next.
    const settled = ended.then(noop, noop);
    this.queued.set(runId, settled);
    void settled.then(() => {
      if (this.queued.get(runId) === settled) this.queued.delete(runId);
    });
    return started;
  }

  private async continueRun(request: DecideRequest): Promise<Continuation> {
    const { runId } = request;
    const store = await this.host.store();
    // A decision for a run still running here waits until its step suspends (or the run ends).
    const running = this.host.live(runId);
    if (running !== undefined) await running.done.catch(noop);
    const waiting = await loadSuspension(store, runId);
    const fresh = checkResumeDecisions(waiting, request.decisions);
    if (fresh.length === 0) return { waiting };
    const resume: RunRequest = {
      agentId: waiting.record.agentId,
      inputText: "",
      resumeFromCheckpoint: waiting.checkpointId,
    };
    if (request.signal !== undefined) resume.signal = request.signal;
    return { live: await this.host.start(resume, fresh) };
  }
}

/** The last `run.finished` of a run's stored events: the one that says how it stands now. */
function lastFinished(events: readonly RuntimeEvent[]): RuntimeEvent[] {
  for (let index = events.length - 1; index >= 0; index--) {
    if (events[index]!.kind === "run.finished") return [events[index]!];
  }
  return [];
}

function noop(): void {}
