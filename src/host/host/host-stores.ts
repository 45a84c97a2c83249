import type { JsonValue } from "../wire/run-result.js";

/**
 * Where a host keeps what outlives a run: the event log, the transcript projected from it, artifacts, runner
 * state, plugin storage and the audit trail. Small interfaces, so a deployment can put each in its own database;
 * `createInMemoryHostStores()` is the builtin for tests and single-process hosts.
 */

export interface EventRecord {
  event_id: string;
  event_type: string;
  event_time?: number | null;
  source: string;
  conversation_id?: string | null;
  thread_id?: string | null;
  actor_type?: string | null;
  actor_id?: string | null;
  subject_type?: string | null;
  subject_id?: string | null;
  input_summary?: string | null;
  run_id?: string | null;
  runner_id?: string | null;
  seq: number;
  cursor: string;
  created_at: number;
  metadata: Record<string, unknown>;
}

export interface EventLogStore {
  append(record: Omit<EventRecord, "seq" | "cursor" | "created_at">): Promise<EventRecord>;
  get(eventId: string): Promise<EventRecord | null>;
  /** Newest first, before `beforeSeq` when given; `limit` at most 100; one thread's only when `threadId` is given. */
  page(query: {
    conversationId?: string | null;
    threadId?: string;
    beforeSeq?: number;
    limit: number;
    eventTypes?: string[] | null;
  }): Promise<{
    items: EventRecord[];
    hasMore: boolean;
  }>;
}

export interface TranscriptRecord {
  transcript_id: string;
  event_id: string;
  conversation_id: string;
  thread_id?: string | null;
  role: string;
  item_type: string;
  content: string;
  content_json?: Record<string, unknown> | null;
  artifact_refs: Record<string, unknown>[];
  seq: number;
  cursor: string;
  created_at: number;
  metadata: Record<string, unknown>;
}

export interface TranscriptStore {
  append(
    item: Omit<TranscriptRecord, "seq" | "cursor" | "created_at" | "transcript_id">,
  ): Promise<TranscriptRecord>;
  /**
   * The newest item's seq. Every query takes a `threadId`: given, it reads that thread of the conversation only
   * (items whose `thread_id` is that id); absent, the whole conversation.
   */
  latestSeq(conversationId: string, threadId?: string): Promise<number | null>;
  page(query: {
    conversationId: string;
    threadId?: string;
    beforeSeq?: number;
    afterSeq?: number;
    limit: number;
    direction: "backward" | "forward";
  }): Promise<{ items: TranscriptRecord[]; hasMore: boolean }>;
  /** Case-insensitive substring match on content, newest first. */
  search(query: {
    conversationId: string;
    threadId?: string;
    text: string;
    topK: number;
    roles?: string[];
  }): Promise<TranscriptRecord[]>;
}

export type ArtifactSource = "platform" | "runner" | "tool" | "system";

export interface ArtifactRecord {
  artifact_id: string;
  artifact_type: string;
  mime_type?: string | null;
  name?: string | null;
  size_bytes?: number | null;
  sha256?: string | null;
  source: ArtifactSource;
  conversation_id?: string | null;
  /** The thread of the conversation the artifact was made in; a run scoped to another thread does not see it. */
  thread_id?: string | null;
  run_id?: string | null;
  runner_id?: string | null;
  created_at: number;
  expires_at?: number | null;
  metadata: Record<string, unknown>;
}

export interface ArtifactStore {
  register(record: Omit<ArtifactRecord, "created_at">, content?: Uint8Array): Promise<ArtifactRecord>;
  get(artifactId: string): Promise<ArtifactRecord | null>;
  read(artifactId: string, range: { offset: number; limit: number }): Promise<Uint8Array | null>;
}

export interface StateStore {
  get(scopeKey: string, key: string): Promise<JsonValue | undefined>;
  set(scopeKey: string, key: string, value: JsonValue): Promise<void>;
  delete(scopeKey: string, key: string): Promise<boolean>;
  /** Keys in ascending order, with a prefix when given; `limit` at most 100. */
  list(
    scopeKey: string,
    options: { prefix?: string | null; limit: number },
  ): Promise<{ keys: string[]; hasMore: boolean }>;
  snapshot(scopeKey: string): Promise<Record<string, JsonValue>>;
}

/** Blobs by owner (`plugin:author/name`, `workspace:id`). */
export interface BlobStorage {
  get(owner: string, key: string): Promise<Uint8Array | null>;
  set(owner: string, key: string, value: Uint8Array): Promise<void>;
  delete(owner: string, key: string): Promise<boolean>;
  keys(owner: string): Promise<string[]>;
}

/** One proxy call or refused message, as the audit trail records it. */
export interface AuditEntry {
  at: number;
  run_id: string | null;
  runner_id: string | null;
  action: string;
  resource: string | null;
  scope: string | null;
  /** `ok`, or the error code the call was refused or failed with. */
  result: string;
  detail?: string;
}

export interface AuditLog {
  record(entry: AuditEntry): void | Promise<void>;
}

export interface HostStores {
  events: EventLogStore;
  transcript: TranscriptStore;
  artifacts: ArtifactStore;
  state: StateStore;
  storage: BlobStorage;
  audit: AuditLog;
}
