import type { Message } from "../contracts/message.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { KeelError } from "../errors/keel-error.js";
import type { RunEventLog } from "../events/run-event-log.js";
import { isTraceContextCarrier, type RunTraceContext } from "../events/trace-context-carrier.js";
import {
  type CheckpointCommitter,
  type CheckpointStore,
  isCheckpointCommitter,
  type RunStore,
} from "../sessions/session-manager.js";
import { storeAsJson } from "../sessions/store-as-json.js";
import { checkpointIdOf, type RunState } from "./run-state.js";

/** Where a run's stored data ends: what a writer must not write again. */
export interface StoredMarks {
  /** Checkpoints the run has written (the next one is `n + 1`). */
  checkpoints: number;
  /** Run transcript messages stored. */
  messages: number;
  /** The last event sequence stored. */
  sequence: number;
  /** The latest checkpoint's id, if any. */
  latestCheckpointId: string | null;
}

/**
 * Writes a run's checkpoints in the one order that keeps the store consistent at every instant: the
 * events since the last write, then the transcript messages since the last write, then the checkpoint, which is
 * the commit point. A crash between them leaves events that did happen and messages past every checkpoint's
 * `transcriptLength`, which the next write replaces. Nothing already stored is written again, so a step costs
 * what it added, not what the run holds.
 */
export class CheckpointWriter {
  private readonly marks: StoredMarks;
  /** The trace context a resumed run's checkpoint kept, carried on when the bus names none. */
  traceContext: RunTraceContext | undefined = undefined;

  constructor(
    private readonly store: CheckpointStore & RunStore,
    private readonly log: RunEventLog,
    marks: StoredMarks,
  ) {
    this.marks = { ...marks };
  }

  get latestCheckpointId(): string | null {
    return this.marks.latestCheckpointId;
  }

  get storedSequence(): number {
    return this.marks.sequence;
  }

  /** Run transcript messages stored, or null when the run has stored none (it never checkpointed). */
  get storedMessages(): number | null {
    return this.marks.checkpoints === 0 && this.marks.messages === 0 ? null : this.marks.messages;
  }

  /**
   * Write `state` as the run's next checkpoint with the transcript up to `transcript.length`. A failing store
   * emits `run.checkpoint_failed` and the run goes on; the checkpoint id is used up either way. A store that
   * stayed away past the run's patience (`store.unavailable`) stops the run instead: steps it cannot record
   * would run again when it is resumed.
   */
  async write(state: RunState, transcript: readonly Message[]): Promise<string | null> {
    const marks = this.marks;
    const checkpointId = checkpointIdOf(state.runId, ++marks.checkpoints);
    const bus = this.log.bus;
    const traceContext =
      (isTraceContextCarrier(bus) ? bus.traceContextOf(state.runId) : undefined) ?? this.traceContext;
    if (traceContext !== undefined) state.traceContext = traceContext;
    try {
      const store = this.store;
      if (isCheckpointCommitter(store)) {
        await this.commit(store, checkpointId, { state, transcript });
      } else {
        await this.flushEvents();
        await this.flushMessages(transcript);
        state.lastSequence = marks.sequence;
        state.transcriptLength = transcript.length;
        await store.createCheckpoint(state.sessionId, checkpointOf(checkpointId, state, transcript));
      }
    } catch (error) {
      this.log.emit("run.checkpoint_failed", {
        checkpointId,
        error: (error as Error).message,
        errorCode: KeelError.isInstance(error) ? error.code : "error.unknown",
      });
      if (KeelError.isInstance(error) && error.code === ERROR_CODES.STORE_UNAVAILABLE) throw error;
      return null;
    }
    marks.latestCheckpointId = checkpointId;
    this.log.emit("run.checkpoint_saved", {
      checkpointId,
      step: state.step,
      phase: state.phase,
      transcriptLength: transcript.length,
    });
    return checkpointId;
  }

  /** The run's transcript was cut back to `length` (a resume): the next write rewrites it from there. */
  rewind(length: number): void {
    if (length < this.marks.messages) this.marks.messages = length;
  }

  /** Store the events emitted since the last write. */
  async flushEvents(): Promise<void> {
    const events = this.log.eventsAfter(this.marks.sequence);
    if (events.length === 0) return;
    await storeAsJson({
      runId: this.log.runId,
      what: "events",
      values: events,
      write: (safe) => this.store.appendEvents(this.log.runId, safe),
    });
    this.marks.sequence = events[events.length - 1]!.sequence;
  }

  /** The three writes as one, for a store that can (all of it is stored or none). */
  private async commit(
    store: CheckpointStore & CheckpointCommitter,
    checkpointId: string,
    snapshot: { state: RunState; transcript: readonly Message[] },
  ): Promise<void> {
    const { state, transcript } = snapshot;
    const marks = this.marks;
    const events = this.log.eventsAfter(marks.sequence);
    const from = Math.min(marks.messages, transcript.length);
    const changed = from !== transcript.length || from !== marks.messages;
    const sequence = events.length === 0 ? marks.sequence : events[events.length - 1]!.sequence;
    state.lastSequence = sequence;
    state.transcriptLength = transcript.length;
    await storeAsJson({
      runId: state.runId,
      what: "checkpoint",
      values: {
        sessionId: state.sessionId,
        runId: state.runId,
        events,
        messages: changed ? { fromIndex: from, items: transcript.slice(from) } : null,
        checkpoint: checkpointOf(checkpointId, state, transcript),
      },
      write: (commit) => store.commitCheckpoint(commit),
    });
    marks.sequence = sequence;
    marks.messages = transcript.length;
  }

  /** Store the messages added since the last write (from where a resume cut the transcript back). */
  private async flushMessages(transcript: readonly Message[]): Promise<void> {
    const marks = this.marks;
    const from = Math.min(marks.messages, transcript.length);
    if (from === transcript.length && from === marks.messages) return;
    await this.store.saveRunMessages(this.log.runId, from, transcript.slice(from));
    marks.messages = transcript.length;
  }
}

function checkpointOf(checkpointId: string, state: RunState, transcript: readonly Message[]) {
  return {
    checkpointId,
    state: state as unknown as Record<string, unknown>,
    transcriptLength: transcript.length,
    artifactCount: state.artifacts.length,
  };
}
