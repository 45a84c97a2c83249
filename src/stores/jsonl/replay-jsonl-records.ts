import type { Message } from "../../contracts/message.js";
import type { RunRecord } from "../../contracts/run-types.js";
import { RuntimeEvent } from "../../contracts/runtime-event.js";
import type { KeelError } from "../../errors/keel-error.js";
import type { SessionArtifact, SessionCheckpoint } from "../../sessions/session-manager.js";
import { corruptRecordError, type JsonlFileMark, type JsonlRecord } from "./read-jsonl-file.js";

/** A session as replayed from its file and then kept in memory. */
export interface SessionEntry {
  state: Record<string, unknown>;
  /** The state as last written, so a scope that changed nothing appends nothing. */
  stateJson: string;
  readonly messages: Message[];
  readonly artifacts: SessionArtifact[];
  /** Map order is insertion order, which is what `listCheckpoints` reports. */
  readonly checkpoints: Map<string, SessionCheckpoint>;
  readonly mark: JsonlFileMark;
}

/** A run as replayed from its file: the newest record line wins; events in file order. */
export interface RunEntry {
  record: RunRecord | null;
  readonly events: RuntimeEvent[];
  /** The run's own transcript: every `messages` line replayed in order, each replacing the tail it starts at. */
  readonly messages: Message[];
  readonly mark: JsonlFileMark;
}

/** Rebuild a session from its file's records; a record of the wrong shape is refused as corrupt. */
export function loadSession(
  path: string,
  contents: { records: JsonlRecord[]; mark: JsonlFileMark },
): SessionEntry {
  const entry: SessionEntry = {
    state: {},
    stateJson: "{}",
    messages: [],
    artifacts: [],
    checkpoints: new Map(),
    mark: contents.mark,
  };
  for (const { type, data, line } of contents.records) {
    const at: RecordLine = { path, line };
    const value = objectData(at, data);
    if (type === "state") entry.state = value;
    else if (type === "message") entry.messages.push(withString(at, value, "role") as unknown as Message);
    else if (type === "artifact")
      entry.artifacts.push(withString(at, value, "name") as unknown as SessionArtifact);
    else {
      const checkpoint = withString(at, value, "checkpointId") as unknown as SessionCheckpoint;
      entry.checkpoints.set(checkpoint.checkpointId, checkpoint);
    }
  }
  entry.stateJson = JSON.stringify(entry.state);
  return entry;
}

/** Rebuild a run's newest record, its event log and its transcript from its file's records. */
export function loadRun(path: string, contents: { records: JsonlRecord[]; mark: JsonlFileMark }): RunEntry {
  const entry: RunEntry = { record: null, events: [], messages: [], mark: contents.mark };
  for (const { type, data, line } of contents.records) {
    const at: RecordLine = { path, line };
    const value = objectData(at, data);
    if (type === "record") {
      entry.record = withString(at, value, "runId") as unknown as RunRecord;
      continue;
    }
    if (type === "messages") {
      replayMessages(at, value, entry.messages);
      continue;
    }
    const event = withString(at, value, "kind");
    if (typeof event.sequence !== "number" || typeof event.timestampMs !== "number") {
      throw corrupt(at, "an event needs numeric sequence and timestampMs");
    }
    entry.events.push(
      new RuntimeEvent(
        event.kind as string,
        (event.payload ?? {}) as Record<string, unknown>,
        event.timestampMs,
        String(event.runId ?? ""),
        String(event.sessionId ?? ""),
        String(event.agentId ?? ""),
        event.sequence,
      ),
    );
  }
  return entry;
}

/**
 * Apply one `messages` line, `{"fromIndex":k,"messages":[…]}`: cut the transcript to `k` messages, then append.
 * The store never writes a `k` beyond the length before it, so one here is damage, not a torn write.
 */
function replayMessages(at: RecordLine, value: Record<string, unknown>, stored: Message[]): void {
  const { fromIndex, messages } = value;
  if (typeof fromIndex !== "number" || !Number.isInteger(fromIndex) || fromIndex < 0) {
    throw corrupt(at, "messages need a non-negative integer fromIndex");
  }
  if (fromIndex > stored.length) {
    throw corrupt(
      at,
      `messages from index ${fromIndex} would leave a gap after the ${stored.length} before them`,
    );
  }
  if (!Array.isArray(messages)) throw corrupt(at, "messages is not an array");
  for (const message of messages) {
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      throw corrupt(at, "a message is not a JSON object");
    }
    withString(at, message as Record<string, unknown>, "role");
  }
  stored.length = fromIndex;
  for (const message of messages) stored.push(message as Message);
}

/** Where a record sits: its file and its 1-based line, which every corrupt-record error names. */
interface RecordLine {
  readonly path: string;
  readonly line: number;
}

function corrupt(at: RecordLine, reason: string): KeelError {
  return corruptRecordError(at.path, at.line, reason);
}

function objectData(at: RecordLine, data: unknown): Record<string, unknown> {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw corrupt(at, "data is not a JSON object");
  }
  return data as Record<string, unknown>;
}

function withString(at: RecordLine, value: Record<string, unknown>, key: string): Record<string, unknown> {
  if (typeof value[key] !== "string") throw corrupt(at, `data has no string "${key}"`);
  return value;
}

/** What a stored event keeps: exactly the constructor's arguments, so a reload rebuilds the same event. */
export function eventJson(event: RuntimeEvent): Record<string, unknown> {
  const { kind, runId, sessionId, agentId, sequence, timestampMs, payload } = event;
  return { kind, runId, sessionId, agentId, sequence, timestampMs, payload };
}
