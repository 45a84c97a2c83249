import { z } from "zod";
import { ContentElementSchema, StateScopeSchema } from "./run-context.js";

/**
 * The stream a runner answers a run with. Every element is `{run_id, type, data, sequence?, timestamp?,
 * usage?}`; `data` has one shape per type. A result of a type Keel does not know is kept as unknown (the protocol
 * says: ignore it with a warning), while a known type with a malformed payload is an error the host can report.
 */

export const RESULT_TYPES = {
  MESSAGE_DELTA: "message.delta",
  MESSAGE_COMPLETED: "message.completed",
  TOOL_CALL_STARTED: "tool.call.started",
  TOOL_CALL_COMPLETED: "tool.call.completed",
  ARTIFACT_CREATED: "artifact.created",
  STATE_UPDATED: "state.updated",
  ACTION_REQUESTED: "action.requested",
  RUN_COMPLETED: "run.completed",
  RUN_FAILED: "run.failed",
} as const;
export type AgentRunResultType = (typeof RESULT_TYPES)[keyof typeof RESULT_TYPES];

/** Failure codes a run can end with besides a runner's own. */
export const RUN_FAILURE_CODES = {
  RUNNER_ERROR: "runner.error",
  TIMEOUT: "runner.timeout",
  CANCELLED: "cancelled",
  SUSPENDED: "runner.suspended",
  NOT_FOUND: "runner.not_found",
  EXCEPTION: "runner.exception",
  CHANNEL_LOST: "runner.channel_lost",
  PROTOCOL: "runner.protocol_error",
} as const;

export const ToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

export const MessageSchema = z.looseObject({
  role: z.string(),
  name: z.string().nullish(),
  content: z.union([z.string(), z.array(ContentElementSchema)]).nullish(),
  tool_calls: z.array(ToolCallSchema).nullish(),
  tool_call_id: z.string().nullish(),
  resp_message_id: z.string().nullish(),
});
export type Message = z.infer<typeof MessageSchema>;

export const MessageChunkSchema = MessageSchema.extend({
  all_content: z.string().nullish(),
  is_final: z.boolean().default(false),
  msg_sequence: z.number().int().default(0),
});
export type MessageChunk = z.infer<typeof MessageChunkSchema>;

export const LLMTokenUsageSchema = z.looseObject({
  prompt_tokens: z.number().int().nullish(),
  completion_tokens: z.number().int().nullish(),
  total_tokens: z.number().int().nullish(),
});
export type LLMTokenUsage = z.infer<typeof LLMTokenUsageSchema>;

/** Any JSON value; `state.updated` values and tool results must be one. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

const jsonObject = () => z.record(z.string(), z.unknown());

export const RESULT_PAYLOAD_SCHEMAS = {
  "message.delta": z.object({ chunk: MessageChunkSchema }),
  "message.completed": z.object({ message: MessageSchema }),
  "tool.call.started": z.object({
    tool_call_id: z.string(),
    tool_name: z.string(),
    parameters: jsonObject().default({}),
  }),
  "tool.call.completed": z.object({
    tool_call_id: z.string(),
    tool_name: z.string(),
    result: jsonObject().nullish(),
    error: z.string().nullish(),
  }),
  "artifact.created": z.object({
    artifact_id: z.string(),
    artifact_type: z.string().min(1),
    mime_type: z.string().nullish(),
    name: z.string().nullish(),
    size_bytes: z.number().int().nonnegative().nullish(),
    sha256: z.string().nullish(),
    metadata: jsonObject().default({}),
    content_base64: z.string().nullish(),
    /** Keel's: content too large to carry inline, sent beforehand as a `__file_chunk` transfer under this key. */
    file_key: z.string().nullish(),
  }),
  "state.updated": z.object({ scope: StateScopeSchema, key: z.string().min(1), value: z.unknown() }),
  "action.requested": z.object({
    action: z.string(),
    target: jsonObject().nullish(),
    payload: jsonObject().nullish(),
  }),
  "run.completed": z.object({
    finish_reason: z.string().default("stop"),
    message: MessageSchema.nullish(),
  }),
  // The seed's example wrote the text under `message`, LangBot's models under `error`: both are read, `error`
  // is written.
  "run.failed": z
    .object({
      code: z.string().default(RUN_FAILURE_CODES.RUNNER_ERROR),
      error: z.string().optional(),
      message: z.string().optional(),
      retryable: z.boolean().default(false),
    })
    .transform(({ code, error, message, retryable }) => ({
      code,
      error: error ?? message ?? "",
      retryable,
    })),
} as const;

type PayloadSchemas = typeof RESULT_PAYLOAD_SCHEMAS;
/** The payload of each known result type, as read. */
export type ResultPayloads = { [K in AgentRunResultType]: z.output<PayloadSchemas[K]> };

export const AgentRunResultEnvelopeSchema = z.looseObject({
  run_id: z.string(),
  type: z.string().min(1),
  data: jsonObject().default({}),
  sequence: z.number().int().nullish(),
  timestamp: z.number().int().nullish(),
  usage: LLMTokenUsageSchema.nullish(),
});

interface ResultHeader {
  run_id: string;
  sequence?: number | null;
  timestamp?: number | null;
  usage?: LLMTokenUsage | null;
}

/** A result of a known type: `result.type === "message.delta"` narrows `result.data.chunk`. */
export type AgentRunResult = {
  [K in AgentRunResultType]: ResultHeader & { type: K; data: ResultPayloads[K] };
}[AgentRunResultType];

/** A result of a type this version does not know: kept whole, for a caller that wants to log it. */
export interface UnknownRunResult extends ResultHeader {
  type: string;
  data: Record<string, unknown>;
}

/** A known result in `result`, an unknown type in `unknown`, or what is wrong with it in `error`. */
export type ParsedRunResult =
  | { ok: true; result: AgentRunResult; unknown?: undefined }
  | { ok: true; result?: undefined; unknown: UnknownRunResult }
  | { ok: false; error: string };

export function isKnownResultType(type: string): type is AgentRunResultType {
  return Object.hasOwn(RESULT_PAYLOAD_SCHEMAS, type);
}

/** Reads one result from the wire. Never throws: a bad result is `{ok: false, error}` naming what is wrong. */
export function parseRunResult(value: unknown): ParsedRunResult {
  const delta = plainDelta(value);
  if (delta) return { ok: true, result: delta };
  const envelope = AgentRunResultEnvelopeSchema.safeParse(value);
  if (!envelope.success) return { ok: false, error: describeIssues(envelope.error) };
  const { run_id, type, data, sequence, timestamp, usage } = envelope.data;
  const header: ResultHeader = { run_id };
  if (sequence != null) header.sequence = sequence;
  if (timestamp != null) header.timestamp = timestamp;
  if (usage != null) header.usage = usage;
  if (!isKnownResultType(type)) return { ok: true, unknown: { ...header, type, data } };
  const payload = RESULT_PAYLOAD_SCHEMAS[type].safeParse(data);
  if (!payload.success) return { ok: false, error: `${type}: ${describeIssues(payload.error)}` };
  return { ok: true, result: { ...header, type, data: payload.data } as AgentRunResult };
}

const DELTA_KEYS = new Set(["role", "content", "msg_sequence", "is_final", "all_content"]);
const ENVELOPE_KEYS = new Set(["run_id", "type", "data", "sequence", "timestamp"]);

/**
 * A `message.delta` of plain text, read without the schemas: the stream's most frequent result, so its parse is
 * most of a host's cost per result. Anything beyond the plain shape (a usage, tool calls, content parts, another
 * field) returns undefined and goes through the schemas, which give the same result for the plain shape.
 */
function plainDelta(value: unknown): AgentRunResult | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const envelope = value as Record<string, unknown>;
  if (envelope.type !== "message.delta" || typeof envelope.run_id !== "string") return undefined;
  const { sequence, timestamp } = envelope;
  if (sequence != null && !Number.isSafeInteger(sequence)) return undefined;
  if (timestamp != null && !Number.isSafeInteger(timestamp)) return undefined;
  for (const key in envelope) if (!ENVELOPE_KEYS.has(key)) return undefined;
  const data = envelope.data as Record<string, unknown> | undefined;
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  for (const key in data) if (key !== "chunk") return undefined;
  const chunk = data.chunk as Record<string, unknown> | undefined;
  if (typeof chunk !== "object" || chunk === null || Array.isArray(chunk)) return undefined;
  for (const key in chunk) if (!DELTA_KEYS.has(key)) return undefined;
  const { role, content, msg_sequence: msgSequence, is_final: isFinal, all_content: allContent } = chunk;
  if (typeof role !== "string") return undefined;
  if (content != null && typeof content !== "string") return undefined;
  if (allContent != null && typeof allContent !== "string") return undefined;
  if (msgSequence !== undefined && !Number.isSafeInteger(msgSequence)) return undefined;
  if (isFinal !== undefined && typeof isFinal !== "boolean") return undefined;
  const result: AgentRunResult = {
    run_id: envelope.run_id,
    type: "message.delta",
    data: {
      chunk: { ...chunk, role, is_final: isFinal ?? false, msg_sequence: (msgSequence as number) ?? 0 },
    },
  };
  if (sequence != null) result.sequence = sequence as number;
  if (timestamp != null) result.timestamp = timestamp as number;
  return result;
}

/** A result to send; `run_id`, `sequence` and `timestamp` are stamped by whoever sends it. */
export type RunResultBody = {
  [K in AgentRunResultType]: { type: K; data: z.input<PayloadSchemas[K]>; usage?: LLMTokenUsage };
}[AgentRunResultType];

export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(root)"}: ${issue.message}`)
    .join("; ");
}
