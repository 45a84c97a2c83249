import { randomUUID } from "node:crypto";
import { nowSeconds } from "../wire/now-seconds.js";
import type { JsonValue } from "../wire/run-result.js";
import type {
  ArtifactRecord,
  AuditEntry,
  AuditLog,
  EventRecord,
  HostStores,
  TranscriptRecord,
} from "./host-stores.js";

/** An audit log that keeps its entries in memory, newest last. */
export class InMemoryAuditLog implements AuditLog {
  readonly entries: AuditEntry[] = [];
  record(entry: AuditEntry): void {
    this.entries.push(entry);
  }
}

/** Every host store in memory: for tests and single-process hosts; nothing survives the process. */
export function createInMemoryHostStores(): HostStores & { audit: InMemoryAuditLog } {
  const events: EventRecord[] = [];
  const transcript: TranscriptRecord[] = [];
  const artifacts = new Map<string, { record: ArtifactRecord; content?: Uint8Array }>();
  const state = new Map<string, Map<string, JsonValue>>();
  const blobs = new Map<string, Map<string, Uint8Array>>();
  let eventSeq = 0;
  let transcriptSeq = 0;
  const scope = (scopeKey: string) => {
    let entries = state.get(scopeKey);
    if (!entries) {
      entries = new Map();
      state.set(scopeKey, entries);
    }
    return entries;
  };
  const inScope = (conversationId: string, threadId: string | undefined) =>
    transcript.filter(
      (item) =>
        item.conversation_id === conversationId && (threadId === undefined || item.thread_id === threadId),
    );
  const owned = (owner: string) => {
    let entries = blobs.get(owner);
    if (!entries) {
      entries = new Map();
      blobs.set(owner, entries);
    }
    return entries;
  };
  return {
    events: {
      append: async (record) => {
        const seq = ++eventSeq;
        const stored: EventRecord = { ...record, seq, cursor: String(seq), created_at: nowSeconds() };
        events.push(stored);
        return stored;
      },
      get: async (eventId) => events.find((event) => event.event_id === eventId) ?? null,
      page: async ({ conversationId, threadId, beforeSeq, limit, eventTypes }) => {
        const matching = events
          .filter(
            (event) =>
              (conversationId == null || event.conversation_id === conversationId) &&
              (threadId === undefined || event.thread_id === threadId) &&
              (beforeSeq === undefined || event.seq < beforeSeq) &&
              (eventTypes == null || eventTypes.includes(event.event_type)),
          )
          .reverse();
        return { items: matching.slice(0, limit), hasMore: matching.length > limit };
      },
    },
    transcript: {
      append: async (item) => {
        const seq = ++transcriptSeq;
        const stored: TranscriptRecord = {
          ...item,
          transcript_id: randomUUID(),
          seq,
          cursor: String(seq),
          created_at: nowSeconds(),
        };
        transcript.push(stored);
        return stored;
      },
      latestSeq: async (conversationId, threadId) => inScope(conversationId, threadId).at(-1)?.seq ?? null,
      page: async ({ conversationId, threadId, beforeSeq, afterSeq, limit, direction }) => {
        const inConversation = inScope(conversationId, threadId);
        const matching =
          direction === "forward"
            ? inConversation.filter((item) => afterSeq === undefined || item.seq > afterSeq)
            : inConversation.filter((item) => beforeSeq === undefined || item.seq < beforeSeq).reverse();
        return { items: matching.slice(0, limit), hasMore: matching.length > limit };
      },
      search: async ({ conversationId, threadId, text, topK, roles }) => {
        const needle = text.toLowerCase();
        return inScope(conversationId, threadId)
          .filter(
            (item) =>
              item.content.toLowerCase().includes(needle) &&
              (roles === undefined || roles.includes(item.role)),
          )
          .reverse()
          .slice(0, topK);
      },
    },
    artifacts: {
      register: async (record, content) => {
        const stored: ArtifactRecord = { ...record, created_at: nowSeconds() };
        artifacts.set(record.artifact_id, content ? { record: stored, content } : { record: stored });
        return stored;
      },
      get: async (artifactId) => artifacts.get(artifactId)?.record ?? null,
      read: async (artifactId, { offset, limit }) => {
        const content = artifacts.get(artifactId)?.content;
        return content ? content.subarray(offset, offset + limit) : null;
      },
    },
    state: {
      get: async (scopeKey, key) => state.get(scopeKey)?.get(key),
      set: async (scopeKey, key, value) => {
        scope(scopeKey).set(key, value);
      },
      delete: async (scopeKey, key) => state.get(scopeKey)?.delete(key) ?? false,
      list: async (scopeKey, { prefix, limit }) => {
        const keys = [...(state.get(scopeKey)?.keys() ?? [])]
          .filter((key) => !prefix || key.startsWith(prefix))
          .sort();
        return { keys: keys.slice(0, limit), hasMore: keys.length > limit };
      },
      snapshot: async (scopeKey) => Object.fromEntries(state.get(scopeKey) ?? []),
    },
    storage: {
      get: async (owner, key) => blobs.get(owner)?.get(key) ?? null,
      set: async (owner, key, value) => {
        owned(owner).set(key, value);
      },
      delete: async (owner, key) => blobs.get(owner)?.delete(key) ?? false,
      keys: async (owner) => [...(blobs.get(owner)?.keys() ?? [])].sort(),
    },
    audit: new InMemoryAuditLog(),
  };
}
