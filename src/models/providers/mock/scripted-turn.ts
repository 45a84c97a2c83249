import { z } from "zod";
import { formatConfigPath } from "../../../config/config-issues.js";
import type { ModelErrorType, ModelRequest, ModelUsage } from "../../../contracts/language-model.js";
import {
  ConfigError,
  LLMConnectionError,
  LLMRateLimitError,
  LLMResponseError,
} from "../../../errors/error-classes.js";
import type { KeelError } from "../../../errors/keel-error.js";

/** One scripted model turn, in camelCase (code) or snake_case (agent.json). */
export interface ScriptedTurn {
  /** The whole text as one delta. */
  text?: string;
  /** Text streamed as these deltas (`llm.delta` each). */
  deltas?: string[];
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: Partial<ModelUsage>;
  /** Fail the call with a typed error. */
  error?: { type: ModelErrorType; message?: string; retryAfterMs?: number };
  /** Wait before answering (honours the request's AbortSignal). */
  delayMs?: number;
}

export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments?: Record<string, unknown>;
  /** Raw argument text, for malformed-argument tests. */
  rawArguments?: string;
}

/** A turn, or a function computing one from the request. */
export type ScriptStep = ScriptedTurn | ((request: ModelRequest, callIndex: number) => ScriptedTurn);

const toolCallSchema = z
  .object({
    id: z.string().optional(),
    name: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()).optional(),
    raw_arguments: z.string().optional(),
    rawArguments: z.string().optional(),
  })
  .strict();

const usageSchema = z
  .object({
    input_tokens: z.number().int().min(0).optional(),
    output_tokens: z.number().int().min(0).optional(),
    cache_read_tokens: z.number().int().min(0).optional(),
    cache_creation_tokens: z.number().int().min(0).optional(),
    reasoning_tokens: z.number().int().min(0).optional(),
    inputTokens: z.number().int().min(0).optional(),
    outputTokens: z.number().int().min(0).optional(),
    cacheReadTokens: z.number().int().min(0).optional(),
    cacheCreationTokens: z.number().int().min(0).optional(),
    reasoningTokens: z.number().int().min(0).optional(),
  })
  .strict();

const turnSchema = z
  .object({
    text: z.string().optional(),
    deltas: z.array(z.string()).optional(),
    reasoning: z.string().optional(),
    tool_calls: z.array(toolCallSchema).optional(),
    toolCalls: z.array(toolCallSchema).optional(),
    usage: usageSchema.optional(),
    error: z
      .object({
        type: z.enum(["rate_limit", "connection", "response", "unknown"]),
        message: z.string().optional(),
        retry_after_ms: z.number().optional(),
        retryAfterMs: z.number().optional(),
      })
      .strict()
      .optional(),
    delay_ms: z.number().int().min(0).optional(),
    delayMs: z.number().int().min(0).optional(),
  })
  .strict();

/** Check and normalise a script from config or code; a bad turn is a `ConfigError` naming its index. */
export function parseScript(script: readonly unknown[]): ScriptStep[] {
  return script.map((step, index) => {
    if (typeof step === "function") return step as ScriptStep;
    const parsed = turnSchema.safeParse(step);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ConfigError(`llm.script[${index}]${subPath(issue?.path ?? [])}: ${issue?.message}`, {
        hint: "A scripted turn has text, deltas, reasoning, tool_calls [{name, arguments}], usage, error or delay_ms",
      });
    }
    const turn = parsed.data;
    const result: ScriptedTurn = {};
    if (turn.text !== undefined) result.text = turn.text;
    if (turn.deltas !== undefined) result.deltas = turn.deltas;
    if (turn.reasoning !== undefined) result.reasoning = turn.reasoning;
    const calls = turn.toolCalls ?? turn.tool_calls;
    if (calls) {
      result.toolCalls = calls.map((call) => {
        const normalized: ScriptedToolCall = { name: call.name };
        if (call.id !== undefined) normalized.id = call.id;
        if (call.arguments !== undefined) normalized.arguments = call.arguments;
        const raw = call.rawArguments ?? call.raw_arguments;
        if (raw !== undefined) normalized.rawArguments = raw;
        return normalized;
      });
    }
    if (turn.usage) {
      const usage = turn.usage;
      result.usage = dropUndefined({
        inputTokens: usage.inputTokens ?? usage.input_tokens,
        outputTokens: usage.outputTokens ?? usage.output_tokens,
        cacheReadTokens: usage.cacheReadTokens ?? usage.cache_read_tokens,
        cacheCreationTokens: usage.cacheCreationTokens ?? usage.cache_creation_tokens,
        reasoningTokens: usage.reasoningTokens ?? usage.reasoning_tokens,
      });
    }
    if (turn.error) {
      const error: NonNullable<ScriptedTurn["error"]> = { type: turn.error.type };
      if (turn.error.message !== undefined) error.message = turn.error.message;
      const retryAfter = turn.error.retryAfterMs ?? turn.error.retry_after_ms;
      if (retryAfter !== undefined) error.retryAfterMs = retryAfter;
      result.error = error;
    }
    const delay = turn.delayMs ?? turn.delay_ms;
    if (delay !== undefined) result.delayMs = delay;
    return result;
  });
}

function subPath(path: readonly PropertyKey[]): string {
  const text = formatConfigPath(path);
  return text === "" || text.startsWith("[") ? text : `.${text}`;
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  const result: Partial<T> = {};
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] !== undefined) result[key] = value[key];
  return result;
}

/** The typed error a scripted `error` turn raises. */
export function scriptedError(error: NonNullable<ScriptedTurn["error"]>): KeelError {
  const message = error.message ?? `scripted ${error.type} error`;
  switch (error.type) {
    case "rate_limit":
      return error.retryAfterMs === undefined
        ? new LLMRateLimitError(message)
        : new LLMRateLimitError(message, { retryAfterMs: error.retryAfterMs });
    case "connection":
      return new LLMConnectionError(message);
    default:
      return new LLMResponseError(message);
  }
}
