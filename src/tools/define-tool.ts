import type { StandardSchemaV1 } from "@standard-schema/spec";
import {
  DEFAULT_EXECUTION_SPEC,
  type JsonSchema,
  normalizeApprovalMode,
  type SideEffects,
  type StreamingTool,
  type Tool,
  type ToolContext,
  type ToolExecutionSpec,
  type ToolStreamPart,
  type ValidationOutcome,
} from "../contracts/tool.js";
import { isStandardSchema, type SchemaLike, toToolInputSchema } from "../schema/to-json-schema.js";
import { formatIssues, validateWithSchema } from "../schema/validate-with-schema.js";

/** The params type a schema validates to; without a typed schema, a plain object of arguments. */
type InferInput<S> = [S] extends [StandardSchemaV1<unknown, infer Output>]
  ? unknown extends Output
    ? Record<string, unknown>
    : Output
  : Record<string, unknown>;

/** `TDeps` is the type of the run's `deps` the handlers read from `ctx.deps`. */
export interface ToolDefinition<
  S extends SchemaLike = Record<string, unknown>,
  Result = unknown,
  TDeps = unknown,
> {
  name: string;
  description: string;
  /** zod or any Standard Schema (turned into JSON Schema for the model), or a JSON Schema object. */
  inputSchema?: S;
  /** The handler. The context is its second argument and never part of the schema the model sees. */
  execute: (input: InferInput<S>, ctx: ToolContext<TDeps>) => Result | Promise<Result>;
  /** Stream text out (`tool.delta`) and finish with a result. */
  stream?: (input: InferInput<S>, ctx: ToolContext<TDeps>) => AsyncIterable<ToolStreamPart>;
  approvalMode?: "inherit" | "never" | "always" | "never_require" | "always_require";
  requiresApproval?: (input: InferInput<S>, ctx: ToolContext<TDeps>) => boolean | Promise<boolean>;
  concurrencySafe?: boolean;
  interruptBehavior?: "cancel" | "block";
  sideEffects?: SideEffects;
  /** Per-call timeout; the executor's default applies when absent. */
  timeoutMs?: number;
  readsFiles?: boolean;
  writesFiles?: boolean;
  /** Default true; set false for tools whose repeat would do harm (writes, payments, messages). */
  durableIdempotent?: boolean;
}

/**
 * Declare a tool from a function.
 *
 * @example
 * const add = defineTool({
 *   name: "add",
 *   description: "Add two numbers",
 *   inputSchema: z.object({ a: z.number(), b: z.number() }),
 *   execute: ({ a, b }) => a + b,
 * });
 *
 * A tool that reads the run's `deps` types its context, and runs that name an agent with it must give them:
 * `execute: ({ id }, ctx: ToolContext<{ db: Db }>) => ctx.deps.db.get(id)`.
 */
export function defineTool<S extends SchemaLike, Result, TDeps = unknown>(
  definition: ToolDefinition<S, Result, TDeps>,
): Tool<InferInput<S>, Result, TDeps> {
  const { name, description, inputSchema, execute } = definition;
  if (!name || typeof name !== "string") throw new TypeError("defineTool: `name` must be a non-empty string");
  if (typeof execute !== "function")
    throw new TypeError(`defineTool("${name}"): \`execute\` must be a function`);
  const jsonSchema = toToolInputSchema(inputSchema);
  const spec: ToolExecutionSpec = Object.freeze({
    ...DEFAULT_EXECUTION_SPEC,
    approvalMode: normalizeApprovalMode(definition.approvalMode),
    concurrencySafe: definition.concurrencySafe ?? DEFAULT_EXECUTION_SPEC.concurrencySafe,
    interruptBehavior: definition.interruptBehavior ?? DEFAULT_EXECUTION_SPEC.interruptBehavior,
    sideEffects: definition.sideEffects ?? DEFAULT_EXECUTION_SPEC.sideEffects,
    defaultTimeoutMs: definition.timeoutMs ?? null,
    readsFiles: definition.readsFiles ?? false,
    writesFiles: definition.writesFiles ?? false,
    supportsStreaming: definition.stream !== undefined,
  });
  const validator = isStandardSchema(inputSchema)
    ? (params: unknown) => standardValidation(inputSchema as StandardSchemaV1<unknown, InferInput<S>>, params)
    : (params: unknown) => jsonSchemaValidation<InferInput<S>>(jsonSchema, params);

  const tool: Tool<InferInput<S>, Result, TDeps> & Partial<StreamingTool<InferInput<S>, TDeps>> = {
    name,
    description,
    durableIdempotent: definition.durableIdempotent ?? true,
    schema: () => jsonSchema,
    executionSpec: () => spec,
    invoke: execute,
    validateParams: validator,
  };
  if (definition.requiresApproval) tool.requiresApproval = definition.requiresApproval;
  if (definition.stream) tool.invokeStream = definition.stream;
  return tool;
}

function standardValidation<T>(
  schema: StandardSchemaV1<unknown, T>,
  params: unknown,
): ValidationOutcome<T> | Promise<ValidationOutcome<T>> {
  const result = validateWithSchema(schema, params);
  if (result instanceof Promise) return result.then(toOutcome);
  return toOutcome(result);
}

function toOutcome<T>(
  result: { ok: true; value: T } | { ok: false; issues: readonly StandardSchemaV1.Issue[] },
): ValidationOutcome<T> {
  return result.ok ? result : { ok: false, error: formatIssues(result.issues) };
}

/** The checks a JSON Schema tool gets without a validator library: an object with its required keys. */
function jsonSchemaValidation<T>(schema: JsonSchema, params: unknown): ValidationOutcome<T> {
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    return { ok: false, error: "- (root): expected an object of arguments" };
  }
  // Checked on every call of the tool: a loop, no closure and no array unless a key is missing.
  const required = schema.required;
  let missing: string | null = null;
  if (Array.isArray(required)) {
    for (const key of required as string[]) {
      if (key in params) continue;
      missing = missing === null ? `- ${key}: required` : `${missing}\n- ${key}: required`;
    }
  }
  if (missing !== null) return { ok: false, error: missing };
  return { ok: true, value: params as T };
}
