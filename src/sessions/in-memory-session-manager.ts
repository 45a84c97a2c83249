import type { Message } from "../contracts/message.js";
import type { RunRecord, RunStatus } from "../contracts/run-types.js";
import type { RuntimeEvent } from "../contracts/runtime-event.js";
import { FinishedEventLog } from "./finished-event-log.js";
import { NodeQueue, type QueueNode } from "./node-queue.js";
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

/** Defaults of {@link InMemorySessionManagerOptions}, shared with the `in_memory` config schema. */
export const DEFAULT_MAX_RUN_LOGS = 1000;
export const DEFAULT_MAX_RUNS = 1000;
export const DEFAULT_MAX_SESSIONS = 1000;
export const DEFAULT_GENERATED_SESSION_TTL_MS = 300_000;

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
  /**
   * Run records kept; past this, the oldest finished run's record goes (with its log). A run that may still go on
   * is never dropped. Default 1,000.
   */
  maxRuns?: number;
  /**
   * Sessions kept; past this, the session idle longest goes (state, messages, artifacts, checkpoints). A session
   * held by a scope, or with a run that may still go on, is never dropped. Default 1,000.
   */
  maxSessions?: number;
  /**
   * How long a session made up for one run (its request named none) is kept once idle, in ms. Checked on the
   * store's next write, so no timer keeps the process alive. Default 300,000 (five minutes); 0 drops it at once.
   */
  generatedSessionTtlMs?: number;
}

/** A run's record, queued among the finished runs once it is done. */
interface RunSlot extends QueueNode<RunSlot> {
  record: RunRecord;
}

/**
 * What a run leaves besides its record: its event log (in columns once the run is done) and its transcript. Queued
 * among the droppable logs while it may be dropped.
 */
interface RunLog extends QueueNode<RunLog> {
  readonly runId: string;
  events: RuntimeEvent[] | FinishedEventLog | null;
  messages: Message[] | null;
}

/** Queued among the idle sessions while nothing pins it. */
interface SessionData extends QueueNode<SessionData> {
  readonly sessionId: string;
  /** When it became idle (`Date.now()`), if it is. */
  idleSince: number;
  /** Its place among the idle generated sessions; made the first time a generated session idles. */
  generatedIdle: GeneratedIdle | null;
  state: Record<string, unknown>;
  /** Made up by the runtime for a request that named no session: nobody can name it but the run's caller. */
  generated: boolean;
  messages: Message[];
  readonly artifacts: SessionArtifact[];
  /** Map order is insertion order, which is what `listCheckpoints` reports. Made on the first checkpoint. */
  checkpoints: Map<string, SessionCheckpoint> | null;
}

interface GeneratedIdle extends QueueNode<GeneratedIdle> {
  readonly data: SessionData;
}

/**
 * The writes a finished run makes, done before they return: what the in-memory store's own `appendEvents`,
 * `saveRun`, `appendMessages`, `saveRunMessages` and `saveArtifact` do, without a promise each. A run's end then
 * needs no chain of promises and suspended frames for a store that has nothing to wait for.
 */
export interface ImmediateRunWrites {
  /** `appendEvents` of an array made for the store: it is kept as it is rather than copied. */
  appendOwnEvents(runId: string, events: RuntimeEvent[]): void;
  /**
   * `saveRun` of a record nobody changes again: kept as it is rather than copied. Its pending calls are given a
   * copy of their own first, as the run's result shares them.
   */
  saveFinalRun(record: RunRecord): void;
  appendMessages(sessionId: string, messages: readonly Message[]): void;
  saveRunMessages(runId: string, fromIndex: number, messages: readonly Message[]): void;
  saveArtifact(sessionId: string, artifact: SessionArtifact): void;
}

const immediateWrites = new WeakMap<object, ImmediateRunWrites>();

/**
 * The store's immediate writes when it is an in-memory store whose writes are its own; `undefined` for any other
 * store, and for one whose writes were replaced (a subclass, a patched method, a proxy), which must be called.
 */
export function immediateWritesOf(store: SessionManager): ImmediateRunWrites | undefined {
  const writes = immediateWrites.get(store);
  if (writes === undefined) return undefined;
  const own = InMemorySessionManager.prototype;
  return store.appendEvents === own.appendEvents &&
    store.saveRun === own.saveRun &&
    store.appendMessages === own.appendMessages &&
    store.saveRunMessages === own.saveRunMessages &&
    store.saveArtifact === own.saveArtifact
    ? writes
    : undefined;
}

/**
 * The default session store (type `in_memory`): everything lives in this process and is gone when it exits.
 * Checkpoint states, messages and events are kept by reference — the run loop hands over values it no longer
 * mutates, and copying them would make every checkpoint cost grow with the transcript. Once a run is done, its
 * events are kept as their fields in columns with the payloads by reference (`FinishedEventLog`): `loadEvents`
 * then gives equal event objects, made anew.
 */
export class InMemorySessionManager implements SessionManager, CheckpointCommitter {
  private readonly lock = new SessionLock();
  private readonly queueSize: number;
  private readonly sessions = new Map<string, SessionData>();
  private readonly runs = new Map<string, RunSlot>();
  private readonly logs = new Map<string, RunLog>();

  // Retention is kept in queues threaded through the stored entries (O(1) to join, leave and find the oldest) so
  // that dropping the oldest candidate never scans what cannot be dropped: with ten thousand runs waiting, a scan
  // per finished run is quadratic.
  /** Logs that may be dropped (their run finished, or was never recorded), oldest first. */
  private readonly droppableLogs = new NodeQueue<RunLog>();
  /** Finished runs, in the order they finished. */
  private readonly finishedRuns = new NodeQueue<RunSlot>();
  /** Per session: open scopes plus recorded runs that may still go on. A pinned session is never dropped. */
  private readonly pins = new Map<string, number>();
  /** Stored, unpinned sessions, idle longest first. */
  private readonly idleSessions = new NodeQueue<SessionData>();
  /** The generated ones among them, for their time to live. */
  private readonly idleGenerated = new NodeQueue<GeneratedIdle>();

  private readonly maxRunLogs: number;
  private readonly maxRuns: number;
  private readonly maxSessions: number;
  private readonly generatedSessionTtlMs: number;

  constructor(options: InMemorySessionManagerOptions = {}) {
    this.queueSize = options.queueSize ?? DEFAULT_SESSION_QUEUE_SIZE;
    this.maxRunLogs = options.maxRunLogs ?? DEFAULT_MAX_RUN_LOGS;
    this.maxRuns = options.maxRuns ?? DEFAULT_MAX_RUNS;
    this.maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.generatedSessionTtlMs = options.generatedSessionTtlMs ?? DEFAULT_GENERATED_SESSION_TTL_MS;
    immediateWrites.set(this, {
      appendOwnEvents: (runId, events) => this.putEvents(runId, events, true),
      saveFinalRun: (record) => {
        record.pendingToolCalls = record.pendingToolCalls.slice();
        this.putRun(record, record);
      },
      appendMessages: (sessionId, messages) => this.putMessages(sessionId, messages),
      saveRunMessages: (runId, fromIndex, messages) => this.putRunMessages(runId, fromIndex, messages),
      saveArtifact: (sessionId, artifact) => this.putArtifact(sessionId, artifact),
    });
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
      this.pin(sessionId, 1);
      const data = this.data(sessionId);
      if (options.generated === true) data.generated = true;
      const state = data.state;
      const done = () => {
        // Persist like a durable store would, so a `setState` inside the scope loses to the scope's state; a
        // session deleted inside its scope stays deleted.
        const data = this.sessions.get(sessionId);
        if (data !== undefined) data.state = state;
        release();
        this.pin(sessionId, -1);
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
    this.dropSession(sessionId);
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
    this.putMessages(sessionId, messages);
  }

  private putMessages(sessionId: string, messages: readonly Message[]): void {
    const data = this.data(sessionId);
    const stored = data.messages;
    // A session's first run: a copy of its exact size, where pushing to the empty array would make room for 17.
    if (stored.length === 0) data.messages = messages.slice();
    else for (const message of messages) stored.push(message);
  }

  /** The session's transcript in order (a new array). */
  async loadMessages(sessionId: string): Promise<Message[]> {
    return this.sessions.get(sessionId)?.messages.slice() ?? [];
  }

  /** Add an artifact to the session. */
  async saveArtifact(sessionId: string, artifact: SessionArtifact): Promise<void> {
    this.putArtifact(sessionId, artifact);
  }

  private putArtifact(sessionId: string, artifact: SessionArtifact): void {
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
    this.putRun(record, copyRunRecord(record));
  }

  /** Store `kept`, a copy of `record` or the record itself when nobody changes it again. */
  private putRun(record: RunRecord, kept: RunRecord): void {
    const { runId } = record;
    let slot = this.runs.get(runId);
    const before = slot?.record;
    if (slot === undefined) {
      slot = { record: kept, prev: null, next: null, queued: false };
      this.runs.set(runId, slot);
    } else slot.record = kept;
    const wasOpen = before !== undefined && before.status !== "done";
    const open = record.status !== "done";
    if (wasOpen !== open || (wasOpen && before.sessionId !== record.sessionId)) {
      if (wasOpen) this.pin(before.sessionId, -1);
      if (open) this.pin(record.sessionId, 1);
    }
    const runLog = this.logs.get(runId);
    if (open) {
      this.finishedRuns.remove(slot);
      if (runLog !== undefined) this.droppableLogs.remove(runLog);
      return;
    }
    if (!slot.queued) this.finishedRuns.push(slot);
    if (runLog !== undefined) {
      compactEvents(runLog);
      if (!runLog.queued) this.droppableLogs.push(runLog);
    }
    this.trimRuns();
    this.trimLogs();
  }

  /** A copy of the run record, or null. */
  async getRun(runId: string): Promise<RunRecord | null> {
    const slot = this.runs.get(runId);
    return slot === undefined ? null : copyRunRecord(slot.record);
  }

  /** Copies of the run records matching the filter, in the order runs were first saved. */
  async listRuns(filter: { sessionId?: string; status?: RunStatus } = {}): Promise<RunRecord[]> {
    const { sessionId, status } = filter;
    const matching: RunRecord[] = [];
    for (const { record } of this.runs.values()) {
      if (sessionId !== undefined && record.sessionId !== sessionId) continue;
      if (status !== undefined && record.status !== status) continue;
      matching.push(copyRunRecord(record));
    }
    return matching;
  }

  /** Append events (ascending sequences) to the run's log. The events themselves are kept, not copied. */
  async appendEvents(runId: string, events: readonly RuntimeEvent[]): Promise<void> {
    this.putEvents(runId, events, false);
  }

  /** `appendEvents`; an `owned` array was made for the store and is kept rather than copied. */
  private putEvents(runId: string, events: readonly RuntimeEvent[], owned: boolean): void {
    const runLog = this.logs.get(runId);
    if (runLog === undefined) {
      this.addLog(runId, owned ? (events as RuntimeEvent[]) : events.slice(), null);
      return;
    }
    let log = runLog.events;
    // Rare: events for a run already done (a recovered log). Its log goes back to a list, and to columns after.
    if (log instanceof FinishedEventLog) log = runLog.events = log.events();
    if (log === null) runLog.events = owned ? (events as RuntimeEvent[]) : events.slice();
    else {
      // Sequences only rise: events at or below the last stored one are a retried batch, stored already.
      const last = log.length === 0 ? 0 : log[log.length - 1]!.sequence;
      for (let index = 0; index < events.length; index++) {
        const event = events[index] as RuntimeEvent;
        if (event.sequence > last) log.push(event);
      }
    }
    if (this.runs.get(runId)?.record.status === "done") compactEvents(runLog);
  }

  /** The run's events with a sequence above `afterSequence` (default: all), in order. */
  async loadEvents(runId: string, options: { afterSequence?: number } = {}): Promise<RuntimeEvent[]> {
    const log = this.logs.get(runId)?.events;
    if (log == null) return [];
    const after = options.afterSequence;
    if (log instanceof FinishedEventLog) return log.events(after);
    return after === undefined ? log.slice() : log.slice(firstEventAfter(log, after));
  }

  /** Write the run's transcript from `fromIndex` on, replacing what was there; messages are kept by reference. */
  async saveRunMessages(runId: string, fromIndex: number, messages: readonly Message[]): Promise<void> {
    this.putRunMessages(runId, fromIndex, messages);
  }

  private putRunMessages(runId: string, fromIndex: number, messages: readonly Message[]): void {
    const runLog = this.logs.get(runId);
    let stored = runLog?.messages;
    if (stored == null) {
      checkTranscriptIndex(runId, fromIndex, 0);
      stored = [];
      if (runLog !== undefined) runLog.messages = stored;
      else this.addLog(runId, null, stored);
    }
    checkTranscriptIndex(runId, fromIndex, stored.length);
    stored.length = fromIndex;
    for (let index = 0; index < messages.length; index++) stored.push(messages[index] as Message);
  }

  async loadRunMessages(runId: string, options: { length?: number } = {}): Promise<Message[]> {
    const stored = this.logs.get(runId)?.messages;
    if (stored == null) return [];
    return options.length === undefined ? stored.slice() : stored.slice(0, options.length);
  }

  /** Events, messages and the checkpoint in one go; a transcript gap refuses all of it. */
  async commitCheckpoint(commit: CheckpointCommit): Promise<SessionCheckpoint> {
    const { runId, messages } = commit;
    if (messages !== null)
      checkTranscriptIndex(runId, messages.fromIndex, this.logs.get(runId)?.messages?.length ?? 0);
    if (commit.events.length > 0) await this.appendEvents(runId, commit.events);
    if (messages !== null) await this.saveRunMessages(runId, messages.fromIndex, messages.items);
    return this.createCheckpoint(commit.sessionId, commit.checkpoint);
  }

  /** Drop everything stored. */
  async close(): Promise<void> {
    this.sessions.clear();
    this.runs.clear();
    this.logs.clear();
    // The maps held the only way to the queued entries, so none of them is pushed or removed again.
    this.droppableLogs.forget();
    this.finishedRuns.forget();
    this.pins.clear();
    this.idleSessions.forget();
    this.idleGenerated.forget();
  }

  /**
   * A run's first log entry. A run that may still go on (waiting, running) keeps its log: resuming needs it. A done
   * run's events go into columns at once.
   */
  private addLog(runId: string, events: RuntimeEvent[] | null, messages: Message[] | null): void {
    const log: RunLog = { runId, events, messages, prev: null, next: null, queued: false };
    this.logs.set(runId, log);
    const status = this.runs.get(runId)?.record.status;
    if (status === undefined || status === "done") this.droppableLogs.push(log);
    if (status === "done") compactEvents(log);
    this.trimLogs();
  }

  /** Drop the oldest droppable logs until no more than `maxRunLogs` are kept, or none is droppable. */
  private trimLogs(): void {
    while (this.logs.size > this.maxRunLogs) {
      const oldest = this.droppableLogs.first;
      if (oldest === null) return;
      this.droppableLogs.remove(oldest);
      this.logs.delete(oldest.runId);
      forgetLog(oldest);
    }
  }

  /** Drop the records (and logs) of the runs that finished first until no more than `maxRuns` are kept. */
  private trimRuns(): void {
    while (this.runs.size > this.maxRuns) {
      const oldest = this.finishedRuns.first;
      if (oldest === null) return;
      const { runId } = oldest.record;
      this.finishedRuns.remove(oldest);
      this.runs.delete(runId);
      const log = this.logs.get(runId);
      if (log === undefined) continue;
      this.droppableLogs.remove(log);
      this.logs.delete(runId);
      forgetLog(log);
    }
  }

  /** Count a scope or an open run on the session; at zero it becomes idle and may be dropped. */
  private pin(sessionId: string, by: 1 | -1): void {
    const pins = (this.pins.get(sessionId) ?? 0) + by;
    if (pins > 0) {
      this.pins.set(sessionId, pins);
      // Only the first pin can find the session idle: a pinned session never is.
      if (pins === 1 && by === 1) {
        const data = this.sessions.get(sessionId);
        if (data !== undefined) this.notIdle(data);
      }
      return;
    }
    this.pins.delete(sessionId);
    const data = this.sessions.get(sessionId);
    if (data !== undefined) this.markIdle(data);
  }

  /** The session idles from now on; `keep` is left alone however many sessions there are (it is being written). */
  private markIdle(data: SessionData, keep?: string): void {
    const now = Date.now();
    data.idleSince = now;
    this.idleSessions.push(data);
    if (data.generated) {
      if (data.generatedIdle === null) data.generatedIdle = { data, prev: null, next: null, queued: false };
      this.idleGenerated.push(data.generatedIdle);
    }
    this.trimSessions(now, keep);
  }

  private notIdle(data: SessionData): void {
    this.idleSessions.remove(data);
    if (data.generatedIdle !== null) this.idleGenerated.remove(data.generatedIdle);
  }

  /** Drop generated sessions idle past their time to live, then the idlest until `maxSessions` are kept. */
  private trimSessions(now: number, keep: string | undefined): void {
    for (;;) {
      const oldest = this.idleGenerated.first?.data;
      if (oldest === undefined || oldest.sessionId === keep) break;
      if (now - oldest.idleSince < this.generatedSessionTtlMs) break;
      this.dropSession(oldest.sessionId);
    }
    while (this.sessions.size > this.maxSessions) {
      const idlest = this.idleSessions.first;
      if (idlest === null || idlest.sessionId === keep) return;
      this.dropSession(idlest.sessionId);
    }
  }

  private dropSession(sessionId: string): void {
    const data = this.sessions.get(sessionId);
    if (data === undefined) return;
    this.sessions.delete(sessionId);
    this.notIdle(data);
    // What a reader took before the drop (a scope's state, a copy of the messages) is its own; the entry itself
    // is emptied so that nothing the session held outlives it (see `forgetLog`).
    data.state = {};
    data.messages = [];
    data.artifacts.length = 0;
    data.checkpoints = null;
  }

  private data(sessionId: string): SessionData {
    let data = this.sessions.get(sessionId);
    if (data === undefined) {
      data = {
        sessionId,
        state: {},
        generated: false,
        messages: [],
        artifacts: [],
        checkpoints: null,
        idleSince: 0,
        generatedIdle: null,
        prev: null,
        next: null,
        queued: false,
      };
      this.sessions.set(sessionId, data);
      if (!this.pins.has(sessionId)) this.markIdle(data, sessionId);
    }
    return data;
  }
}

/**
 * Empty a dropped log. V8 keeps a `Map`'s table in the old generation once the map is old, and a table the map
 * outgrew stays there, still pointing at the entries it held, until the next full collection. A dropped entry
 * left whole would keep its run's events and transcript alive through every scavenge until then, promoting them:
 * with a few runs kept, that was most of what a busy process's scavenges copied.
 */
function forgetLog(log: RunLog): void {
  log.events = null;
  log.messages = null;
}

/** A done run's events go into columns (`FinishedEventLog`); a log that does not fit them stays a list. */
function compactEvents(runLog: RunLog): void {
  const events = runLog.events;
  if (events === null || events instanceof FinishedEventLog) return;
  runLog.events = FinishedEventLog.of(events) ?? events;
}
