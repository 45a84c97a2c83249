import type { Message } from "../contracts/message.js";
import type { RunRecord, RunStatus } from "../contracts/run-types.js";
import type { RuntimeEvent } from "../contracts/runtime-event.js";
import { DEFAULT_SESSION_QUEUE_SIZE, SessionLock } from "./session-lock.js";
import type {
  CheckpointCommit,
  CheckpointCommitter,
  SessionArtifact,
  SessionCheckpoint,
  SessionManager,
  SessionScope,
  SessionScopeOptions,
} from "./session-manager.js";
import { checkTranscriptIndex, copyRunRecord, firstEventAfter, stampCheckpoint } from "./session-records.js";

/** Options of {@link InMemorySessionManager}. */
export interface InMemorySessionManagerOptions {
  /** Runs allowed to wait per session when `session()` is not told otherwise. Default 1000. */
  queueSize?: number;
  /**
   * Event logs and run transcripts kept; past this, the oldest finished run's are dropped (its record stays; a run
   * that may still go on keeps them). Memory is the only store
   * here, so an unbounded history would make a long-lived process slower with every run. Default 1000.
   */
  maxRunLogs?: number;
}

interface SessionData {
  state: Record<string, unknown>;
  readonly messages: Message[];
  readonly artifacts: SessionArtifact[];
  /** Map order is insertion order, which is what `listCheckpoints` reports. Made on the first checkpoint. */
  checkpoints: Map<string, SessionCheckpoint> | null;
}

/**
 * The default session store (type `in_memory`): everything lives in this process and is gone when it exits.
 * Checkpoint states, messages and events are kept by reference — the run loop hands over values it no longer
 * mutates, and copying them would make every checkpoint cost grow with the transcript.
 */
export class InMemorySessionManager implements SessionManager, CheckpointCommitter {
  private readonly lock = new SessionLock();
  private readonly queueSize: number;
  private readonly sessions = new Map<string, SessionData>();
  private readonly runs = new Map<string, RunRecord>();
  private readonly events = new Map<string, RuntimeEvent[]>();
  private readonly runMessages = new Map<string, Message[]>();

  private readonly maxRunLogs: number;

  constructor(options: InMemorySessionManagerOptions = {}) {
    this.queueSize = options.queueSize ?? DEFAULT_SESSION_QUEUE_SIZE;
    this.maxRunLogs = options.maxRunLogs ?? 1000;
  }

  /** Run `fn` holding the session; a nested call passing `scope.token` re-enters and sees the same state. */
  session<T>(
    sessionId: string,
    fn: (scope: SessionScope) => Promise<T>,
    options: SessionScopeOptions = {},
  ): Promise<T> {
    const token = options.reentrantToken ?? Symbol(sessionId);
    const acquired = this.lock.acquire(sessionId, {
      reentrantToken: token,
      queueSize: options.queueSize ?? this.queueSize,
      signal: options.signal,
    });
    // Reactions rather than an async frame: a run holds its session for its whole life (S3).
    return acquired.then((release) => {
      const state = this.data(sessionId).state;
      const done = () => {
        // Persist like a durable store would, so a `setState` inside the scope loses to the scope's state; a
        // session deleted inside its scope stays deleted.
        const data = this.sessions.get(sessionId);
        if (data !== undefined) data.state = state;
        release();
      };
      let result: Promise<T>;
      try {
        result = fn({ sessionId, state, token });
      } catch (error) {
        done();
        throw error;
      }
      return Promise.resolve(result).then(
        (value) => {
          done();
          return value;
        },
        (error: unknown) => {
          done();
          throw error;
        },
      );
    });
  }

  /** A shallow copy of the session's state; `{}` for an unknown session. */
  async getState(sessionId: string): Promise<Record<string, unknown>> {
    const data = this.sessions.get(sessionId);
    return data === undefined ? {} : { ...data.state };
  }

  /** Replace the session's state with a shallow copy of `state`. */
  async setState(sessionId: string, state: Record<string, unknown>): Promise<void> {
    this.data(sessionId).state = { ...state };
  }

  /** Forget the session's state, messages, artifacts and checkpoints; its runs and their events stay. */
  async deleteSession(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId);
  }

  /** Sessions with any stored data, in creation order. */
  async listSessions(): Promise<string[]> {
    return [...this.sessions.keys()];
  }

  /** Append a message to the session's transcript. */
  async appendMessage(sessionId: string, message: Message): Promise<void> {
    this.data(sessionId).messages.push(message);
  }

  /** Append a run's messages in one go, in order. */
  async appendMessages(sessionId: string, messages: readonly Message[]): Promise<void> {
    const stored = this.data(sessionId).messages;
    for (const message of messages) stored.push(message);
  }

  /** The session's transcript in order (a new array). */
  async loadMessages(sessionId: string): Promise<Message[]> {
    return this.sessions.get(sessionId)?.messages.slice() ?? [];
  }

  /** Add an artifact to the session. */
  async saveArtifact(sessionId: string, artifact: SessionArtifact): Promise<void> {
    this.data(sessionId).artifacts.push({ ...artifact, kind: artifact.kind ?? "generic" });
  }

  /** The session's artifacts in the order they were saved (a new array). */
  async listArtifacts(sessionId: string): Promise<SessionArtifact[]> {
    return this.sessions.get(sessionId)?.artifacts.slice() ?? [];
  }

  /** Store a checkpoint stamped with the schema version and creation time; an existing id is replaced. */
  async createCheckpoint(
    sessionId: string,
    checkpoint: Omit<SessionCheckpoint, "schemaVersion" | "createdAt">,
  ): Promise<SessionCheckpoint> {
    const stored = stampCheckpoint(checkpoint);
    const data = this.data(sessionId);
    if (data.checkpoints === null) data.checkpoints = new Map();
    data.checkpoints.set(stored.checkpointId, stored);
    return { ...stored };
  }

  /** The checkpoint, or null when the session has no checkpoint of that id. */
  async loadCheckpoint(sessionId: string, checkpointId: string): Promise<SessionCheckpoint | null> {
    const stored = this.sessions.get(sessionId)?.checkpoints?.get(checkpointId);
    return stored === undefined ? null : { ...stored };
  }

  /** Checkpoint ids of the session in creation order. */
  async listCheckpoints(sessionId: string): Promise<string[]> {
    const checkpoints = this.sessions.get(sessionId)?.checkpoints;
    return checkpoints == null ? [] : [...checkpoints.keys()];
  }

  /** Insert or replace a run record (stored as a copy). */
  async saveRun(record: RunRecord): Promise<void> {
    this.runs.set(record.runId, copyRunRecord(record));
  }

  /** A copy of the run record, or null. */
  async getRun(runId: string): Promise<RunRecord | null> {
    const record = this.runs.get(runId);
    return record === undefined ? null : copyRunRecord(record);
  }

  /** Copies of the run records matching the filter, in the order runs were first saved. */
  async listRuns(filter: { sessionId?: string; status?: RunStatus } = {}): Promise<RunRecord[]> {
    const { sessionId, status } = filter;
    const matching: RunRecord[] = [];
    for (const record of this.runs.values()) {
      if (sessionId !== undefined && record.sessionId !== sessionId) continue;
      if (status !== undefined && record.status !== status) continue;
      matching.push(copyRunRecord(record));
    }
    return matching;
  }

  /** Append events (ascending sequences) to the run's log. The events themselves are kept, not copied. */
  async appendEvents(runId: string, events: readonly RuntimeEvent[]): Promise<void> {
    const log = this.events.get(runId);
    if (log !== undefined) {
      // Sequences only rise: events at or below the last stored one are a retried batch, stored already.
      const last = log.length === 0 ? 0 : log[log.length - 1]!.sequence;
      for (let index = 0; index < events.length; index++) {
        const event = events[index] as RuntimeEvent;
        if (event.sequence > last) log.push(event);
      }
      return;
    }
    this.events.set(runId, events.slice());
    if (this.events.size > this.maxRunLogs) this.evictOldest(this.events);
  }

  /** The run's events with a sequence above `afterSequence` (default: all), in order. */
  async loadEvents(runId: string, options: { afterSequence?: number } = {}): Promise<RuntimeEvent[]> {
    const log = this.events.get(runId);
    if (log === undefined) return [];
    const after = options.afterSequence;
    return after === undefined ? log.slice() : log.slice(firstEventAfter(log, after));
  }

  /** Write the run's transcript from `fromIndex` on, replacing what was there; messages are kept by reference. */
  async saveRunMessages(runId: string, fromIndex: number, messages: readonly Message[]): Promise<void> {
    let stored = this.runMessages.get(runId);
    if (stored === undefined) {
      stored = [];
      this.runMessages.set(runId, stored);
      if (this.runMessages.size > this.maxRunLogs) this.evictOldest(this.runMessages);
    }
    checkTranscriptIndex(runId, fromIndex, stored.length);
    stored.length = fromIndex;
    for (let index = 0; index < messages.length; index++) stored.push(messages[index] as Message);
  }

  async loadRunMessages(runId: string, options: { length?: number } = {}): Promise<Message[]> {
    const stored = this.runMessages.get(runId);
    if (stored === undefined) return [];
    return options.length === undefined ? stored.slice() : stored.slice(0, options.length);
  }

  /** Events, messages and the checkpoint in one go; a transcript gap refuses all of it. */
  async commitCheckpoint(commit: CheckpointCommit): Promise<SessionCheckpoint> {
    const { runId, messages } = commit;
    if (messages !== null)
      checkTranscriptIndex(runId, messages.fromIndex, this.runMessages.get(runId)?.length ?? 0);
    if (commit.events.length > 0) await this.appendEvents(runId, commit.events);
    if (messages !== null) await this.saveRunMessages(runId, messages.fromIndex, messages.items);
    return this.createCheckpoint(commit.sessionId, commit.checkpoint);
  }

  /** Drop everything stored. */
  async close(): Promise<void> {
    this.sessions.clear();
    this.runs.clear();
    this.events.clear();
    this.runMessages.clear();
  }

  /**
   * Drop the oldest finished run's log. A run that may still go on (waiting for a decision, or running) keeps
   * its events and transcript: resuming it needs them.
   */
  private evictOldest(logs: Map<string, unknown>): void {
    for (const runId of logs.keys()) {
      const status = this.runs.get(runId)?.status;
      if (status === "waiting" || status === "running" || status === "created") continue;
      logs.delete(runId);
      return;
    }
  }

  private data(sessionId: string): SessionData {
    let data = this.sessions.get(sessionId);
    if (data === undefined) {
      data = { state: {}, messages: [], artifacts: [], checkpoints: null };
      this.sessions.set(sessionId, data);
    }
    return data;
  }
}
