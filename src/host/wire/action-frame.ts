import { z } from "zod";
import { describeIssues } from "./run-result.js";

/**
 * The plugin-runtime action protocol: both ends send requests `{seq_id, action, data}` and answer with responses
 * `{seq_id, code, message, data, chunk_status}` on one connection. A streamed answer is any number of
 * `continue` responses with the request's `seq_id` and one `end` response.
 */

export const ActionRequestSchema = z.looseObject({
  seq_id: z.number().int(),
  action: z.string().min(1),
  data: z.record(z.string(), z.unknown()),
  context: z.record(z.string(), z.unknown()).nullish(),
});
export type ActionRequest = z.infer<typeof ActionRequestSchema>;

export const CHUNK_STATUS = { CONTINUE: "continue", END: "end" } as const;
export type ChunkStatus = (typeof CHUNK_STATUS)[keyof typeof CHUNK_STATUS];

export const ActionResponseSchema = z.looseObject({
  seq_id: z.number().int().nullable().default(null),
  code: z.number().int(),
  message: z.string().default(""),
  data: z.record(z.string(), z.unknown()).default({}),
  chunk_status: z.enum(["continue", "end"]).nullable().default("continue"),
});
export type ActionResponse = z.infer<typeof ActionResponseSchema>;

export type ActionFrame =
  | { kind: "request"; request: ActionRequest }
  | { kind: "response"; response: ActionResponse };

export type ParsedFrame = { ok: true; frame: ActionFrame } | { ok: false; error: string; seqId?: number };

/**
 * Reads one message. A message with `action` is a request, one with `code` a response; anything else — not
 * JSON, not an object, neither shape — is an error that names the problem and, when it had one, the `seq_id`
 * (so the receiver can answer the request it could not read).
 */
export function parseActionFrame(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: "message is not JSON" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, error: "message is not a JSON object" };
  }
  const record = value as Record<string, unknown>;
  // Most messages are well-formed responses and requests with every field given; checking those by hand skips
  // the schema's copy of the whole message, which is most of the receive cost of a small result.
  if (isPlainResponse(record)) return { ok: true, frame: { kind: "response", response: record } };
  if (isPlainRequest(record)) return { ok: true, frame: { kind: "request", request: record } };
  return parseUnusualFrame(record);
}

/** A message the plain checks did not accept, through the schemas: their defaults, or an error naming the fault. */
function parseUnusualFrame(record: Record<string, unknown>): ParsedFrame {
  const seqId = Number.isSafeInteger(record.seq_id) ? (record.seq_id as number) : undefined;
  const withSeq = (error: string): ParsedFrame =>
    seqId === undefined ? { ok: false, error } : { ok: false, error, seqId };
  if ("action" in record) {
    const parsed = ActionRequestSchema.safeParse(record);
    return parsed.success
      ? { ok: true, frame: { kind: "request", request: parsed.data } }
      : withSeq(`bad request: ${describeIssues(parsed.error)}`);
  }
  if ("code" in record) {
    const parsed = ActionResponseSchema.safeParse(record);
    return parsed.success
      ? { ok: true, frame: { kind: "response", response: parsed.data } }
      : withSeq(`bad response: ${describeIssues(parsed.error)}`);
  }
  return withSeq("message is neither a request (action) nor a response (code)");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A response with all five fields, each of its type: what the schema would accept unchanged. */
function isPlainResponse(record: Record<string, unknown>): record is ActionResponse {
  const { seq_id: seqId, code, chunk_status: chunkStatus } = record;
  return (
    !("action" in record) &&
    (seqId === null || Number.isSafeInteger(seqId)) &&
    Number.isSafeInteger(code) &&
    typeof record.message === "string" &&
    isObject(record.data) &&
    (chunkStatus === "continue" || chunkStatus === "end" || chunkStatus === null)
  );
}

/** A request with its three fields of their types and no context, or an object one. */
function isPlainRequest(record: Record<string, unknown>): record is ActionRequest {
  const { action, context } = record;
  return (
    Number.isSafeInteger(record.seq_id) &&
    typeof action === "string" &&
    action.length > 0 &&
    isObject(record.data) &&
    (context === undefined || context === null || isObject(context))
  );
}

export function successResponse(
  seqId: number,
  data: Record<string, unknown>,
  chunkStatus: ChunkStatus,
): ActionResponse {
  return { seq_id: seqId, code: 0, message: "success", data, chunk_status: chunkStatus };
}

export function errorResponse(
  seqId: number | null,
  message: string,
  data: Record<string, unknown> = {},
): ActionResponse {
  return { seq_id: seqId, code: 1, message, data, chunk_status: "end" };
}
