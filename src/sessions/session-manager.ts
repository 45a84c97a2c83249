import type { Message } from "../contracts/message.js";
import type { RunRecord, RunStatus } from "../contracts/run-types.js";
import type { RuntimeEvent } from "../contracts/runtime-event.js";
import type { SessionArtifact } from "../contracts/session-artifact.js";
import type { StoreOutageWait } from "./store-outage.js";

export const SESSION_SCHEMA_VERSION = 1;

export type { SessionArtifact };

export interface SessionCheckpoint {
  schemaVersion: number;
  checkpointId: string;
  /** The run's whole serialised state at this point. */
  state: Record<string, unknown>;
  transcriptLength: number;
  artifactCount: number;
  createdAt: string;
}

export interface SessionScopeOptions {
  /** Hold the session again from inside its own scope (agent-as-tool with a shared session). */
  reentrantToken?: symbol;
  /** Runs allowed to wait for the session; one more is refused with `SessionQueueFullError`. */
  queueSize?: number;
  signal?: AbortSignal;
  /**
   * The runtime made the session up because the run's request named none: only the run's caller knows its id,
   * so a store bounded in memory may forget it sooner once it is idle.
   */
  generated?: boolean;
  /**
   * Waits out a store outage met inside the scope — a session lock lost with its connection and taken again,
   * the state written back when the scope ends. Without it such a write is tried once.
   */
  outage?: StoreOutageWait;
}

export interface SessionScope {
  readonly sessionId: string;
  /** The live, mutable session state; persisted when the scope ends. */
  readonly state: Record<string, unknown>;
  /** Pass to a nested `session()` call to re-enter this scope. */
  readonly token: symbol;
}

/** Sessions: one at a time, each with its persisted state. */
export interface SessionStore {
  /** Run `fn` while holding the session exclusively; runs of one session execute one at a time. */
  session<T>(
    sessionId: string,
    fn: (scope: SessionScope) => Promise<T>,
    options?: SessionScopeOptions,
  ): Promise<T>;
  getState(sessionId: string): Promise<Record<string, unknown>>;
  setState(sessionId: string, state: Record<string, unknown>): Promise<void>;
  deleteSession(sessionId: string): Promise<void>;
  listSessions(): Promise<string[]>;
}

/** A session's conversation: its messages and the artifacts its runs kept. */
export interface TranscriptStore {
  appendMessage(sessionId: string, message: Message): Promise<void>;
  /** Append several messages at once and in order (one write for a run's messages). */
  appendMessages(sessionId: string, messages: readonly Message[]): Promise<void>;
  loadMessages(sessionId: string): Promise<Message[]>;
  saveArtifact(sessionId: string, artifact: SessionArtifact): Promise<void>;
  listArtifacts(sessionId: string): Promise<SessionArtifact[]>;
}

/** A session's checkpoints: a run's whole state at a step, to resume or branch from. */
export interface CheckpointStore {
  /** Store a checkpoint; the same id again replaces it and keeps its place in `listCheckpoints`. */
  createCheckpoint(
    sessionId: string,
    checkpoint: Omit<SessionCheckpoint, "schemaVersion" | "createdAt">,
  ): Promise<SessionCheckpoint>;
  loadCheckpoint(sessionId: string, checkpointId: string): Promise<SessionCheckpoint | null>;
  listCheckpoints(sessionId: string): Promise<string[]>;
}

/** Runs: their records, their numbered event logs and their transcripts. */
export interface RunStore {
  saveRun(record: RunRecord): Promise<void>;
  getRun(runId: string): Promise<RunRecord | null>;
  listRuns(filter?: { sessionId?: string; status?: RunStatus }): Promise<RunRecord[]>;
  /** Append a run's events; an event whose sequence is already stored is skipped (a retried batch). */
  appendEvents(runId: string, events: readonly RuntimeEvent[]): Promise<void>;
  loadEvents(runId: string, options?: { afterSequence?: number }): Promise<RuntimeEvent[]>;
  /**
   * Write a run's transcript from `fromIndex` on; whatever was stored at or after it is replaced (a resumed
   * step rewrites the one a crash cut short). `fromIndex` beyond the stored length is a `StoreError`.
   * Checkpoints hold only a transcript length, so a durable step appends its new messages, not the transcript.
   */
  saveRunMessages(runId: string, fromIndex: number, messages: readonly Message[]): Promise<void>;
  /** A run's stored transcript: the first `length` messages when given, else all of them. */
  loadRunMessages(runId: string, options?: { length?: number }): Promise<Message[]>;
}

/**
 * The session seam, as one backend implements it: sessions, their transcripts, checkpoints and runs. Code that
 * needs only a part takes that part's type, so what it touches is plain from its signature.
 */
export interface SessionManager extends SessionStore, TranscriptStore, CheckpointStore, RunStore {
  close(): Promise<void>;
}

/** One durable step of a run: its new events, its new transcript messages and the checkpoint that covers them. */
export interface CheckpointCommit {
  sessionId: string;
  runId: string;
  /** Events to append; a sequence already stored is skipped, as in `appendEvents`. */
  events: readonly RuntimeEvent[];
  /** Messages to write from `fromIndex` on, as in `saveRunMessages`; null when the transcript did not change. */
  messages: { fromIndex: number; items: readonly Message[] } | null;
  checkpoint: Omit<SessionCheckpoint, "schemaVersion" | "createdAt">;
}

/**
 * An optional ability of a store: write a checkpoint with its events and messages in one write — one transaction
 * or one statement — rather than three. All of it is stored or none of it. The run loop uses it when a store has
 * it (a durable run writes one or two checkpoints a step, so round trips are what checkpoints cost).
 */
export interface CheckpointCommitter {
  commitCheckpoint(commit: CheckpointCommit): Promise<SessionCheckpoint>;
}

export function isCheckpointCommitter<S extends CheckpointStore>(store: S): store is S & CheckpointCommitter {
  return typeof (store as Partial<CheckpointCommitter>).commitCheckpoint === "function";
}
