import type { Stats } from "node:fs";
import { mkdir, readdir, rm, stat, truncate } from "node:fs/promises";
import { join } from "node:path";
import type { Message } from "../../contracts/message.js";
import type { RunRecord, RunStatus } from "../../contracts/run-types.js";
import type { RuntimeEvent } from "../../contracts/runtime-event.js";
import { KeelError } from "../../errors/keel-error.js";
import { DEFAULT_SESSION_QUEUE_SIZE, SessionLock } from "../../sessions/session-lock.js";
import {
  type CheckpointCommit,
  type CheckpointCommitter,
  SESSION_SCHEMA_VERSION,
  type SessionArtifact,
  type SessionCheckpoint,
  type SessionManager,
  type SessionScope,
  type SessionScopeOptions,
} from "../../sessions/session-manager.js";
import {
  checkTranscriptIndex,
  copyRunRecord,
  firstEventAfter,
  stampCheckpoint,
} from "../../sessions/session-records.js";
import { AppendHandles } from "./append-handles.js";
import { decodeFileName, encodeFileName } from "./encode-file-name.js";
import { DEFAULT_MAX_LINE_BYTES } from "./jsonl-line-limit.js";
import { type JsonlFileMark, readJsonlFile } from "./read-jsonl-file.js";
import { eventJson, loadRun, loadSession, type RunEntry, type SessionEntry } from "./replay-jsonl-records.js";
import { SharedFileLocks } from "./shared-file-locks.js";
import { toFileStoreError } from "./to-file-store-error.js";

/** Options of {@link JsonlFileSessionManager}. */
export interface JsonlFileSessionManagerOptions {
  /** Directory holding `sessions/`, `runs/` and `locks/`; created on first write. */
  rootDir: string;
  /** fsync every append before it resolves: survives power loss, costs a disk flush per write. Default false. */
  fsync?: boolean;
  /** Longest line written or read; a bigger record is refused rather than stored. Default 16 MiB. */
  maxLineBytes?: number;
  /** Runs allowed to wait per session when `session()` is not told otherwise. Default 1000. */
  queueSize?: number;
}

/** Append handles kept open at most: a run's file and its session's file are two. */
const KEPT_HANDLES = 64;

const SESSION_TYPES: ReadonlySet<string> = new Set(["state", "message", "artifact", "checkpoint"]);
const RUN_TYPES: ReadonlySet<string> = new Set(["record", "event", "messages"]);

/**
 * The `jsonl_file` session store: one append-only JSON-lines file per session and per run under `rootDir`,
 * replayed once and then served from memory. Every write appends whole lines in one call. A session's writes
 * and `session()` scopes are exclusive across processes through a lock file; runs have one writer at a time
 * (the process running them), and their files are re-checked (`stat`) on every access. A file this process keeps
 * appending to keeps its handle open (see {@link AppendHandles}): a run's file among the most recently written
 * ones, a session's file while this process holds the session's lock file.
 */
export class JsonlFileSessionManager implements SessionManager, CheckpointCommitter {
  private readonly lock = new SessionLock();
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly runs = new Map<string, RunEntry>();
  private readonly fileLocks = new SharedFileLocks();
  private readonly handles = new AppendHandles(KEPT_HANDLES);
  private readonly queues = new Map<string, Promise<void>>();
  private readonly madeDirs = new Map<string, Promise<unknown>>();
  private readonly fsync: boolean;
  private readonly maxLineBytes: number;
  private readonly queueSize: number;
  private readonly sessionsDir: string;
  private readonly runsDir: string;
  private readonly locksDir: string;

  constructor(options: JsonlFileSessionManagerOptions) {
    this.fsync = options.fsync ?? false;
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.queueSize = options.queueSize ?? DEFAULT_SESSION_QUEUE_SIZE;
    this.sessionsDir = join(options.rootDir, "sessions");
    this.runsDir = join(options.rootDir, "runs");
    this.locksDir = join(options.rootDir, "locks");
  }

  /** Run `fn` holding the session in this process and across processes; the state is written when it ends. */
  async session<T>(
    sessionId: string,
    fn: (scope: SessionScope) => Promise<T>,
    options: SessionScopeOptions = {},
  ): Promise<T> {
    const token = options.reentrantToken ?? Symbol(sessionId);
    const path = this.sessionPath(sessionId);
    const release = await this.lock.acquire(sessionId, {
      reentrantToken: token,
      queueSize: options.queueSize ?? this.queueSize,
      signal: options.signal,
    });
    try {
      const unhold = await this.holdSession(sessionId, options.signal);
      try {
        const entry = await this.serial(path, () => this.freshSession(sessionId));
        const state = entry.state;
        try {
          return await fn({ sessionId, state, token });
        } finally {
          const persist = () => this.serial(path, () => this.persistScopeState(sessionId, entry, state));
          await (options.outage === undefined ? persist() : options.outage.run("session save", persist));
        }
      } finally {
        await unhold();
      }
    } finally {
      release();
    }
  }

  /** A deep copy of the session's state; `{}` for an unknown session. */
  async getState(sessionId: string): Promise<Record<string, unknown>> {
    return structuredClone((await this.readSession(sessionId)).state);
  }

  /** Replace the session's state (one `state` line). */
  async setState(sessionId: string, state: Record<string, unknown>): Promise<void> {
    const json = JSON.stringify(state);
    await this.writeSession(sessionId, [this.line("state", json)], (entry) => {
      entry.state = JSON.parse(json) as Record<string, unknown>;
      entry.stateJson = json;
    });
  }

  /** Remove the session's file; its runs and their events stay. A corrupt session can still be deleted. */
  async deleteSession(sessionId: string): Promise<void> {
    const path = this.sessionPath(sessionId);
    const unhold = await this.holdSession(sessionId);
    try {
      await this.serial(path, async () => {
        await this.handles.close(path);
        await rm(path, { force: true });
        this.sessions.delete(sessionId);
      });
    } finally {
      await unhold();
    }
  }

  /** Sessions with a file, sorted by id. */
  async listSessions(): Promise<string[]> {
    return (await this.listIds(this.sessionsDir)).sort();
  }

  /** Append a message to the session's transcript. */
  async appendMessage(sessionId: string, message: Message): Promise<void> {
    await this.appendMessages(sessionId, [message]);
  }

  /** Append messages in order with one write. */
  async appendMessages(sessionId: string, messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return;
    const lines = messages.map((message) => this.line("message", JSON.stringify(message)));
    await this.writeSession(sessionId, lines, (entry) => {
      for (const message of messages) entry.messages.push(message);
    });
  }

  /** The session's transcript in order (a new array). */
  async loadMessages(sessionId: string): Promise<Message[]> {
    return (await this.readSession(sessionId)).messages.slice();
  }

  /** Add an artifact to the session. */
  async saveArtifact(sessionId: string, artifact: SessionArtifact): Promise<void> {
    const stored = { ...artifact, kind: artifact.kind ?? "generic" };
    await this.writeSession(sessionId, [this.line("artifact", JSON.stringify(stored))], (entry) => {
      entry.artifacts.push(stored);
    });
  }

  /** The session's artifacts in the order they were saved (a new array). */
  async listArtifacts(sessionId: string): Promise<SessionArtifact[]> {
    return (await this.readSession(sessionId)).artifacts.slice();
  }

  /** Store a checkpoint stamped with the schema version and creation time; an existing id is replaced. */
  async createCheckpoint(
    sessionId: string,
    checkpoint: Omit<SessionCheckpoint, "schemaVersion" | "createdAt">,
  ): Promise<SessionCheckpoint> {
    return this.writeCheckpoint(sessionId, stampCheckpoint(checkpoint));
  }

  /** The checkpoint, or null when the session has no checkpoint of that id. */
  async loadCheckpoint(sessionId: string, checkpointId: string): Promise<SessionCheckpoint | null> {
    const stored = (await this.readSession(sessionId)).checkpoints.get(checkpointId);
    return stored === undefined ? null : { ...stored };
  }

  /** Checkpoint ids of the session in creation order. */
  async listCheckpoints(sessionId: string): Promise<string[]> {
    return [...(await this.readSession(sessionId)).checkpoints.keys()];
  }

  /** Append the run's record (stored as a copy); the newest record line wins on load. */
  async saveRun(record: RunRecord): Promise<void> {
    const copy = copyRunRecord(record);
    const lines = [this.line("record", JSON.stringify(copy))];
    await this.writeRun(record.runId, () => ({
      lines,
      apply: (entry) => {
        entry.record = copy;
      },
    }));
  }

  /** A copy of the run's newest record, or null. */
  async getRun(runId: string): Promise<RunRecord | null> {
    const record = (await this.readRun(runId)).record;
    return record === null ? null : copyRunRecord(record);
  }

  /** Copies of the run records matching the filter, oldest `createdAt` first. */
  async listRuns(filter: { sessionId?: string; status?: RunStatus } = {}): Promise<RunRecord[]> {
    const matching: RunRecord[] = [];
    for (const runId of await this.listIds(this.runsDir)) {
      const record = (await this.readRun(runId)).record;
      if (record === null) continue;
      if (filter.sessionId !== undefined && record.sessionId !== filter.sessionId) continue;
      if (filter.status !== undefined && record.status !== filter.status) continue;
      matching.push(copyRunRecord(record));
    }
    return matching.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  }

  /** Append events (ascending sequences) to the run's log with one write; the events are kept, not copied. */
  async appendEvents(runId: string, events: readonly RuntimeEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.writeRun(runId, (entry) => this.runLines(runId, entry, { events, messages: null }));
  }

  /** The run's events with a sequence above `afterSequence` (default: all), in order. */
  async loadEvents(runId: string, options: { afterSequence?: number } = {}): Promise<RuntimeEvent[]> {
    const log = (await this.readRun(runId)).events;
    const after = options.afterSequence;
    return after === undefined ? log.slice() : log.slice(firstEventAfter(log, after));
  }

  /**
   * Write the run's transcript from `fromIndex` on with one `messages` line, `{"fromIndex":k,"messages":[…]}`;
   * replay cuts the transcript to `k` messages and appends. The index is checked against the file as it is
   * now, in the run file's queue, so no write can slip in between. The messages are kept, not copied.
   */
  async saveRunMessages(runId: string, fromIndex: number, messages: readonly Message[]): Promise<void> {
    await this.writeRun(runId, (entry) =>
      this.runLines(runId, entry, { events: [], messages: { fromIndex, items: messages } }),
    );
  }

  /**
   * Events and messages with ONE append of several lines to the run's file, then the checkpoint line to the
   * session's file. Two files cannot take one write, but this order is still all or nothing for a reader that
   * goes by checkpoints, as the run loop does: the checkpoint line is the commit point. A crash between the two
   * appends leaves events and messages past the last checkpoint, exactly what a crash in the middle of a step
   * leaves; a resume starts from that checkpoint's `lastSequence` and `transcriptLength`, skips the events it
   * finds stored and rewrites the transcript from that length. The gap check runs before the first append, so a
   * refused index writes nothing anywhere.
   */
  async commitCheckpoint(commit: CheckpointCommit): Promise<SessionCheckpoint> {
    const { runId } = commit;
    const stored = stampCheckpoint(commit.checkpoint);
    await this.writeRun(runId, (entry) => this.runLines(runId, entry, commit));
    return this.writeCheckpoint(commit.sessionId, stored);
  }

  /** The run's transcript: its first `length` messages when given, else all of them (a new array). */
  async loadRunMessages(runId: string, options: { length?: number } = {}): Promise<Message[]> {
    const stored = (await this.readRun(runId)).messages;
    return options.length === undefined ? stored.slice() : stored.slice(0, options.length);
  }

  /** Wait for writes in flight, close the kept handles and forget the cache; the files stay. */
  async close(): Promise<void> {
    await Promise.all([...this.queues.values()]);
    await this.handles.closeAll();
    this.sessions.clear();
    this.runs.clear();
  }

  private sessionPath(sessionId: string): string {
    return join(this.sessionsDir, `${encodeFileName(sessionId)}.jsonl`);
  }

  private runPath(runId: string): string {
    return join(this.runsDir, `${encodeFileName(runId)}.jsonl`);
  }

  /** One stored line; `json` is the data already serialised, so nothing is serialised twice. */
  private line(type: string, json: string | undefined): string {
    const line = `{"schemaVersion":${SESSION_SCHEMA_VERSION},"type":"${type}","data":${json ?? "null"},"ts":"${new Date().toISOString()}"}`;
    if (line.length * 3 > this.maxLineBytes && Buffer.byteLength(line) > this.maxLineBytes) {
      throw new KeelError(`a ${type} record of ${Buffer.byteLength(line)} bytes exceeds max_line_bytes`, {
        code: "store.record_too_large",
        hint: `Raise max_line_bytes of the jsonl_file store (now ${this.maxLineBytes}) or keep large payloads out of the session (store a reference in an artifact).`,
      });
    }
    return line;
  }

  /** Append a stamped checkpoint line to the session's file. */
  private async writeCheckpoint(sessionId: string, stored: SessionCheckpoint): Promise<SessionCheckpoint> {
    await this.writeSession(sessionId, [this.line("checkpoint", JSON.stringify(stored))], (entry) => {
      entry.checkpoints.set(stored.checkpointId, stored);
    });
    return { ...stored };
  }

  /**
   * The lines that append `events` and write `messages` to a run whose file is as `entry` says, and the change
   * to apply to `entry` once they are written. Events at or below the last stored sequence are a retried batch,
   * stored already, and are skipped (sequences only rise). A transcript gap throws, before anything is written.
   * Nothing to cut and nothing to add writes no `messages` line, like an empty batch of events.
   */
  private runLines(runId: string, entry: RunEntry, change: RunChange): RunWrite {
    const { events, messages } = change;
    const stored = entry.events;
    const last = stored.length === 0 ? 0 : stored[stored.length - 1]!.sequence;
    const fresh =
      events.length === 0 || events[0]!.sequence > last
        ? events
        : events.filter((event) => event.sequence > last);
    const lines = fresh.map((event) => this.line("event", JSON.stringify(eventJson(event))));
    const fromIndex = messages?.fromIndex ?? 0;
    const items = messages?.items ?? [];
    if (messages !== null) {
      checkTranscriptIndex(runId, fromIndex, entry.messages.length);
      if (fromIndex !== entry.messages.length || items.length > 0) {
        lines.push(this.line("messages", `{"fromIndex":${fromIndex},"messages":${JSON.stringify(items)}}`));
      }
    }
    const apply = (written: RunEntry): void => {
      for (const event of fresh) written.events.push(event);
      if (messages === null) return;
      written.messages.length = fromIndex;
      for (let index = 0; index < items.length; index++) written.messages.push(items[index] as Message);
    };
    return { lines, apply };
  }

  /** Run file work for one path one task at a time, so appends, truncation and reloads never interleave. */
  private serial<T>(path: string, task: () => Promise<T>): Promise<T> {
    const result = (this.queues.get(path) ?? Promise.resolve()).then(task);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.queues.set(path, tail);
    void tail.then(() => {
      if (this.queues.get(path) === tail) this.queues.delete(path);
    });
    return result;
  }

  private readSession(sessionId: string): Promise<SessionEntry> {
    return this.serial(this.sessionPath(sessionId), () => this.freshSession(sessionId));
  }

  /** Append to the session's file holding its cross-process lock, then apply the change to the cache. */
  private async writeSession(
    sessionId: string,
    lines: string[],
    apply: (entry: SessionEntry) => void,
  ): Promise<void> {
    const path = this.sessionPath(sessionId);
    const unhold = await this.holdSession(sessionId);
    try {
      await this.serial(path, async () => {
        const entry = await this.freshSession(sessionId);
        await this.append({ path, dir: this.sessionsDir, mark: entry.mark }, lines);
        apply(entry);
      });
    } finally {
      await unhold();
    }
  }

  /** Write the scope's state unless the session was deleted inside the scope or the state did not change. */
  private async persistScopeState(
    sessionId: string,
    scoped: SessionEntry,
    state: Record<string, unknown>,
  ): Promise<void> {
    const current = this.sessions.get(sessionId);
    if (current === undefined || (current !== scoped && !current.mark.exists)) return;
    current.state = state;
    const json = JSON.stringify(state);
    if (json === current.stateJson && current.mark.exists) return;
    await this.append({ path: this.sessionPath(sessionId), dir: this.sessionsDir, mark: current.mark }, [
      this.line("state", json),
    ]);
    current.stateJson = json;
  }

  /**
   * The cached session, re-read when the file changed behind it. While this process holds the session's lock
   * file nobody else writes it, so after one check the cache is trusted without a `stat` per call.
   */
  private async freshSession(sessionId: string): Promise<SessionEntry> {
    const cached = this.sessions.get(sessionId);
    const held = this.fileLocks.held(sessionId);
    if (cached !== undefined && held?.validated) return cached;
    const path = this.sessionPath(sessionId);
    let entry = cached;
    if (entry === undefined || (await changed(path, entry.mark))) {
      entry = loadSession(path, await readJsonlFile(path, SESSION_TYPES, this.maxLineBytes));
      this.sessions.set(sessionId, entry);
    }
    if (held !== undefined) held.validated = true;
    return entry;
  }

  private readRun(runId: string): Promise<RunEntry> {
    return this.serial(this.runPath(runId), () => this.freshRun(runId));
  }

  /** Append to the run's file with one write, then apply the change to the cache; both depend on the fresh entry. */
  private async writeRun(runId: string, write: (entry: RunEntry) => RunWrite): Promise<void> {
    const path = this.runPath(runId);
    await this.serial(path, async () => {
      const entry = await this.freshRun(runId);
      const { lines, apply } = write(entry);
      if (lines.length === 0) return;
      await this.append({ path, dir: this.runsDir, mark: entry.mark }, lines);
      apply(entry);
    });
  }

  private async freshRun(runId: string): Promise<RunEntry> {
    const path = this.runPath(runId);
    let entry = this.runs.get(runId);
    if (entry === undefined || (await changed(path, entry.mark))) {
      entry = loadRun(path, await readJsonlFile(path, RUN_TYPES, this.maxLineBytes));
      this.runs.set(runId, entry);
    }
    return entry;
  }

  /**
   * Append whole lines with one write. A torn tail found on load is cut off first so the new lines do not glue
   * onto it. `mark` is advanced to the new end; if the file grew by more than we wrote, another process wrote
   * too, and the mark is spoiled so the next access re-reads the file. The handle is kept for the next append
   * when it is still open on the file `mark` saw (same inode); a file that was missing is opened anew.
   */
  private async append(file: AppendTarget, lines: string[]): Promise<void> {
    try {
      await this.appendLines(file, lines);
    } catch (error) {
      throw toFileStoreError(error, file.path, "append");
    }
  }

  private async appendLines(file: AppendTarget, lines: string[]): Promise<void> {
    const { path, dir, mark } = file;
    if (mark.exists && mark.goodLength < mark.size) await truncate(path, mark.goodLength);
    let made = this.madeDirs.get(dir);
    if (made === undefined) {
      made = mkdir(dir, { recursive: true });
      this.madeDirs.set(dir, made);
    }
    await made;
    const text = `${lines.join("\n")}\n`;
    const handle = await this.handles.take(path, mark.exists ? mark.ino : 0);
    let stats: Stats;
    try {
      await handle.appendFile(text);
      if (this.fsync) await handle.sync();
      stats = await handle.stat();
    } catch (error) {
      await handle.close().catch(() => {});
      await cutBack(path, mark);
      throw error;
    }
    const expected = (mark.exists ? mark.goodLength : 0) + Buffer.byteLength(text);
    mark.exists = true;
    mark.size = stats.size === expected ? stats.size : -1;
    mark.mtimeMs = stats.mtimeMs;
    mark.ino = stats.ino;
    mark.goodLength = stats.size;
    await this.handles.keep(path, handle, stats.ino);
  }

  /**
   * Take or share this process's hold on the session's lock file. When this process lets go of it, another may
   * write the session's file, so the handle kept for it is closed (after any append queued before).
   */
  private async holdSession(sessionId: string, signal?: AbortSignal): Promise<() => Promise<void>> {
    const lockPath = join(this.locksDir, `${encodeFileName(sessionId)}.lock`);
    const unhold = await this.fileLocks.hold(sessionId, lockPath, signal).catch((error: unknown) => {
      throw toFileStoreError(error, lockPath, "session lock");
    });
    return async () => {
      await unhold();
      if (this.fileLocks.held(sessionId) !== undefined) return;
      const path = this.sessionPath(sessionId);
      await this.serial(path, () => this.handles.close(path));
    };
  }

  private async listIds(dir: string): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const ids: string[] = [];
    for (const name of names) {
      const id = name.endsWith(".jsonl") ? decodeFileName(name.slice(0, -6)) : undefined;
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }
}

/** Events to append and transcript messages to write (null: none), as a checkpoint commit carries them. */
type RunChange = Pick<CheckpointCommit, "events" | "messages">;

/** Lines for a run's file, and the change they make to its cached entry once written. */
interface RunWrite {
  lines: string[];
  apply: (entry: RunEntry) => void;
}

/** A file to append to: its path, the directory to create first, and what this process last saw of it. */
interface AppendTarget {
  path: string;
  dir: string;
  /** Advanced in place by the append. */
  mark: JsonlFileMark;
}

/**
 * Undo what a failed append may have left (a full disk takes part of a write): the file is cut back to its last
 * whole record. If even that fails, the mark claims a longer file, so the next append cuts it first.
 */
async function cutBack(path: string, mark: JsonlFileMark): Promise<void> {
  try {
    await truncate(path, mark.exists ? mark.goodLength : 0);
  } catch {
    mark.size = Number.MAX_SAFE_INTEGER;
  }
}

/** True when the file is not what `mark` says: another process wrote, truncated or deleted it. */
async function changed(path: string, mark: JsonlFileMark): Promise<boolean> {
  try {
    const stats = await stat(path);
    return (
      !mark.exists || stats.size !== mark.size || stats.mtimeMs !== mark.mtimeMs || stats.ino !== mark.ino
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return mark.exists;
    throw error;
  }
}

export { DEFAULT_MAX_LINE_BYTES };
