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
