import { AgentApiError, AGENT_API_ERROR_CODES as CODES } from "../wire/api-error.js";
import type { JsonValue } from "../wire/run-result.js";
import type { ArtifactRecord, EventRecord, TranscriptRecord } from "./host-stores.js";

/** The largest state value, in UTF-8 bytes of its JSON. */
export const MAX_STATE_VALUE_BYTES = 256 * 1024;

/** A state value as stored: JSON, at most 256 KiB; anything else is refused with the code that says why. */
export function checkStateValue(value: unknown): JsonValue {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined || !isJson(value))
    throw new AgentApiError(CODES.INVALID_ARGUMENT, "a state value must be JSON");
  if (Buffer.byteLength(text) > MAX_STATE_VALUE_BYTES) {
    throw new AgentApiError(
      CODES.PAYLOAD_TOO_LARGE,
      `a state value is at most ${MAX_STATE_VALUE_BYTES} bytes of JSON`,
    );
  }
  return value as JsonValue;
}

function isJson(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJson(item, depth + 1));
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.values(value as Record<string, unknown>).every((item) => isJson(item, depth + 1));
  }
  return false;
}

/** A page of transcript items as the protocol's `HistoryPage`. */
export function pageOfTranscript(
  page: { items: TranscriptRecord[]; hasMore: boolean },
  includeArtifacts: boolean,
) {
  const items = page.items.map((item) => ({
    transcript_id: item.transcript_id,
    event_id: item.event_id,
    conversation_id: item.conversation_id,
    thread_id: item.thread_id ?? null,
    role: item.role,
    item_type: item.item_type,
    content: item.content,
    content_json: item.content_json ?? null,
    artifact_refs: includeArtifacts ? item.artifact_refs : [],
    seq: item.seq,
    cursor: item.cursor,
    created_at: item.created_at,
    metadata: item.metadata,
  }));
  return {
    items,
    prev_cursor: items[0]?.cursor ?? null,
    next_cursor: page.hasMore ? (items.at(-1)?.cursor ?? null) : null,
    has_more: page.hasMore,
  };
}

/** An event record as runners see it. */
export function publicEvent(event: EventRecord) {
  return {
    event_id: event.event_id,
    event_type: event.event_type,
    event_time: event.event_time ?? null,
    source: event.source,
    conversation_id: event.conversation_id ?? null,
    thread_id: event.thread_id ?? null,
    actor_type: event.actor_type ?? null,
    actor_id: event.actor_id ?? null,
    subject_type: event.subject_type ?? null,
    subject_id: event.subject_id ?? null,
    input_summary: event.input_summary ?? null,
    seq: event.seq,
    cursor: event.cursor,
    created_at: event.created_at,
    metadata: event.metadata,
  };
}

/** Artifact metadata as runners see it: no storage internals. */
export function publicArtifact(artifact: ArtifactRecord) {
  return {
    artifact_id: artifact.artifact_id,
    artifact_type: artifact.artifact_type,
    mime_type: artifact.mime_type ?? null,
    name: artifact.name ?? null,
    size_bytes: artifact.size_bytes ?? null,
    sha256: artifact.sha256 ?? null,
    source: artifact.source,
    conversation_id: artifact.conversation_id ?? null,
    run_id: artifact.run_id ?? null,
    runner_id: artifact.runner_id ?? null,
    created_at: artifact.created_at,
    expires_at: artifact.expires_at ?? null,
    metadata: artifact.metadata,
  };
}

/** A page size a runner asked for, at most 100; `fallback` when it asked for none that makes sense. */
export function boundedLimit(value: unknown, fallback: number): number {
  return Number.isSafeInteger(value) && (value as number) > 0 ? Math.min(value as number, 100) : fallback;
}

/** A transcript or event cursor, read as the sequence number it is. */
export function cursor(
  name: "beforeSeq" | "afterSeq",
  value: unknown,
): { beforeSeq?: number; afterSeq?: number } {
  const parsed = typeof value === "string" ? Number(value) : Number.NaN;
  return Number.isSafeInteger(parsed) ? { [name]: parsed } : {};
}
