import type { ModelUsage } from "../contracts/language-model.js";
import type { RunResult, RunUsage } from "../contracts/run-types.js";
import type { ErrorDetails } from "../errors/keel-error.js";
import {
  anyValue,
  bool,
  either,
  type FieldTypeOf,
  list,
  named,
  num,
  oneOf,
  orNull,
  type PayloadField,
  record,
  str,
  typed,
} from "./payload-fields.js";
import type { RunTraceContext } from "./trace-context-carrier.js";

/** The taxonomy of every event Keel emits; `docs/events.md` and the payload types are generated from it. */
export interface EventSchema {
  readonly name: string;
  /** Payload keys every emitter must set; a missing one is logged as a warning, never thrown. */
  readonly requiredPayload: readonly string[];
  readonly optionalPayload: readonly string[];
  /** Each payload key's type, required and optional keys alike. */
  readonly fields: Readonly<Record<string, PayloadField<unknown>>>;
  /** One sentence: what happened and when it is emitted. */
  readonly description: string;
}

type Fields = Readonly<Record<string, PayloadField<unknown>>>;
type EventRow = readonly [required: Fields, optional: Fields, description: string];

/** Keeps the rows' literal keys and marker types, from which `EventPayloads` is read. */
function defineEvents<const Rows extends Readonly<Record<string, EventRow>>>(rows: Rows): Rows {
  return rows;
}

const OK_OR_ERROR = oneOf("ok", "error");
const MCP_MODE = named("McpConnectionMode", oneOf("per_call", "pooled"));
const RESUME_MODE = named(
  "ResumeMode",
  oneOf("replay_tool_call", "use_decision_as_tool_result", "pass_decision_to_tool"),
);
const MODEL_STOP_REASON = named(
  "ModelStopReason",
  oneOf("end_turn", "tool_use", "max_tokens", "stop_sequence", "content_filter", "unknown"),
);

// One row per event, `name: [required keys, optional keys, description]`, each key with its type; turned into
// frozen `EventSchema` objects below.
const EVENTS = defineEvents({
  // run lifecycle
  "run.started": [
    { resumed: bool },
    { traceContext: typed<RunTraceContext>("RunTraceContext") },
    "A run entered its step loop, first at start and again after each resume (`resumed: true`, with the `traceContext` its checkpoint kept when a tracing bus followed it); a new run's `traceContext` is its caller's (`RunRequest.traceContext`), the parent of its span.",
  ],
  "run.finished": [
    { result: typed<RunResult>("RunResult") },
    {},
    "A run ended with any stop reason; always the run's last event, carrying the RunResult.",
  ],
  "run.failed": [
    { error: str, errorDetails: typed<ErrorDetails>("ErrorDetails") },
    {},
    "A run ended with an error; emitted just before `run.finished`.",
  ],
  "run.cancelled": [
    {},
    { reason: str },
    "A run was cancelled by `cancel()` or its AbortSignal; emitted just before `run.finished`.",
  ],
  "step.started": [
    { step: num },
    { resumed: bool },
    "A step of the run loop began (steps count from 1); `resumed` when a resumed run re-enters a step a checkpoint caught in flight.",
  ],
  "step.finished": [
    { step: num },
    { action: str },
    "A step reached StepEnd, after its model call and tool calls.",
  ],
  // models
  "llm.called": [
    { model: str, hasTools: bool },
    { provider: str },
    "A model call is about to be sent, after BeforeInference.",
  ],
  "llm.delta": [{ text: str }, {}, "The model streamed a piece of answer text."],
  "llm.reasoning": [
    { text: str },
    {},
    "The model streamed a piece of reasoning text, which is never part of the answer.",
  ],
  "llm.finished": [
    { model: str },
    { usage: typed<ModelUsage>("ModelUsage"), stopReason: MODEL_STOP_REASON, durationMs: num },
    "A model call returned its complete response.",
  ],
  "llm.failed": [
    { model: str, error: str, errorDetails: typed<ErrorDetails>("ErrorDetails") },
    {},
    "A model call failed after its retries were spent.",
  ],
  "usage.updated": [
    { usage: typed<RunUsage>("RunUsage") },
    {},
    "The run's token and cost totals changed after a model call.",
  ],
  "budget.cost_skipped": [
    { limit: num, reason: str, model: str },
    {},
    "`maxCostUsd` is set but the cost is unknown (`model` has no price), so the cost limit is not enforced; emitted once per run.",
  ],
  // tools
  "tool.started": [
    { toolCallId: str, toolId: str, params: record },
    {},
    "A tool call passed its gate and began to execute.",
  ],
  "tool.delta": [
    { toolCallId: str, toolId: str, text: str },
    {},
    "A streaming tool produced a piece of output.",
  ],
  "tool.completed": [
    { toolCallId: str, toolId: str, result: anyValue, durationMs: num },
    {},
    "A tool call succeeded with its result.",
  ],
  "tool.failed": [
    { toolCallId: str, toolId: str, error: str },
    { code: str, rule: str, durationMs: num },
    "A tool call failed, was refused by policy, permission or sandbox (`rule`), or was denied.",
  ],
  "tool.suspended": [
    { toolCallId: str, toolId: str, params: record, resumeMode: RESUME_MODE },
    { reason: str },
    "A tool call stopped to wait for a human decision; the run will end `suspended`.",
  ],
  "tool.decision": [
    { toolCallId: str, toolId: str, action: oneOf("approve", "deny", "result") },
    { result: anyValue, reason: str, decisionId: str, always: either(bool, oneOf("session")), sticky: bool },
    "A decision (`approve`, `deny` or `result` with its value as `result`) was applied to a suspended tool call; `sticky` when an `always` decision answered it.",
  ],
  "tool.retry_requested": [
    { toolId: str, attempt: num, error: str },
    { toolCallId: str, delayMs: num },
    "The `retry` executor will run a failed tool call again after `delayMs`, as attempt number `attempt`.",
  ],
  "tool.batch.started": [
    { batchId: str, toolCallIds: list(str), concurrentCount: num },
    {},
    "A batch of tool calls began, `concurrentCount` of them running together.",
  ],
  "tool.batch.completed": [
    { batchId: str, successes: num, failures: num, durationMs: num },
    {},
    "Every tool call of a batch finished.",
  ],
  "tool.preflight": [
    { toolId: str, result: OK_OR_ERROR, durationMs: num },
    { error: str },
    "A tool's `preflight()` ran before the session's first turn; `result` is `ok` or `error`.",
  ],
  "tool.mcp.preflight": [
    { toolId: str, server: str, result: OK_OR_ERROR, durationMs: num },
    { error: str, toolCount: num },
    "An MCP toolset with `probe_on_preflight` connected to its server and listed its tools, once per session.",
  ],
  "tool.mcp.connect": [
    { toolId: str, server: str, mode: MCP_MODE },
    { success: bool, durationMs: num, error: str, reconnect: bool },
    "An MCP toolset connected to its server (`success: false` with the error's class and code when it could not; `reconnect` after a dead or stale session); never arguments or headers.",
  ],
  "tool.mcp.call": [
    { toolId: str, toolName: str, success: bool, durationMs: num },
    { error: str, server: str, mode: MCP_MODE },
    "An MCP toolset called one of its server's tools (`toolName` is the server's name for it); never arguments or results, `error` is the error's class and code or `tool_error`.",
  ],
  "tool.mcp.close": [
    { toolId: str, server: str },
    { durationMs: num, mode: MCP_MODE },
    "An MCP toolset closed a connection: after a per-call call, on `releaseSession`, on `close()` or a stale session.",
  ],
  "tool.background.submitted": [
    { toolId: str, toolCallId: str, jobId: str },
    {},
    "A tool call was submitted as a background job to be polled later.",
  ],
  // outputs
  artifact: [
    { name: str, kind: str, payload: anyValue },
    {},
    "A pattern or tool added an artifact to the run's result.",
  ],
  "validation.retry": [
    { attempt: num, error: str },
    {},
    "The final output did not match `outputType`, so the pattern runs again with the validation error.",
  ],
  // patterns
  "pattern.step_started": [
    { step: num },
    { planStep: str },
    "A pattern began one of its own steps (a plan step for `plan_execute`).",
  ],
  "pattern.step_finished": [
    { step: num, action: str },
    {},
    "A pattern finished one of its steps with the named action.",
  ],
  "pattern.phase": [{ phase: str }, {}, "A pattern moved to another phase (such as planning or executing)."],
  "pattern.plan_created": [{ plan: list(str) }, {}, "The `plan_execute` pattern produced its plan."],
  // context and memory
  "context.assemble.started": [{}, {}, "The context assembler began building the run's transcript."],
  "context.assemble.completed": [
    { transcriptSize: num, artifactCount: num, durationMs: num },
    {},
    "The context assembler built the transcript and loaded the session's artifacts.",
  ],
  "memory.inject.started": [{}, {}, "Memory began injecting its view into the run before the first step."],
  "memory.inject.completed": [{ viewSize: num }, {}, "Memory injected its view into the run."],
  "memory.inject_failed": [{ error: str }, {}, "Memory injection failed; the run goes on without it."],
  "memory.writeback.started": [{}, {}, "Memory began writing the finished run back."],
  "memory.writeback.completed": [{}, {}, "Memory wrote the finished run back."],
  "memory.writeback_failed": [{ error: str }, {}, "Memory writeback failed; the run's result is unaffected."],
  "memory.write_mode": [
    { mode: oneOf("disabled", "candidate", "external") },
    {},
    "The run's memory tools write in this mode: `disabled`, `candidate` or `external`; logged when the run starts.",
  ],
  // sessions and durable runs
  "session.acquired": [
    { sessionId: str },
    {},
    "A run obtained its session's exclusive scope, after waiting its turn.",
  ],
  "run.checkpoint_saved": [
    { checkpointId: str, step: num, transcriptLength: num },
    { phase: oneOf("step_end", "tools", "suspended") },
    "A checkpoint was written; its id is a valid `resumeFromCheckpoint` target.",
  ],
  "run.checkpoint_failed": [
    { checkpointId: str, error: str },
    { errorCode: str },
    "Writing a checkpoint failed; the run goes on.",
  ],
  "run.resume_attempted": [
    { checkpointId: orNull(str), attempt: num, errorCode: str },
    { errorType: str, delayMs: num },
    "A durable run hit a retryable error and resumes from its latest checkpoint (checkpointId null: from its start, when the error came before any checkpoint).",
  ],
  "run.resume_succeeded": [
    { checkpointId: orNull(str), attempt: num },
    {},
    "A durable run resumed from a checkpoint and is running again.",
  ],
  "run.resume_exhausted": [
    { attempt: num, errorCode: str, limit: num },
    { errorType: str },
    "A durable run spent `maxResumeAttempts` and ends failed with the last error.",
  ],
  "tool.outcome_unknown": [
    { toolCallId: str, toolId: str },
    { hint: str },
    "A resumed run found a call of a non-idempotent tool that started but left no result; it is suspended for a decision rather than run again.",
  ],
  "run.durable_idempotency_warning": [
    { toolId: str, hint: str },
    {},
    "A durable run uses a tool that is not idempotent; emitted once per run and tool.",
  ],
  // runtime
  "config.reloaded": [
    { oldVersion: num, newVersion: num, changedAgents: list(str) },
    {},
    "`reload()` re-read the config file and replaced the agent definitions.",
  ],
  "agent.reloaded": [
    { agentId: str },
    {},
    "`reloadAgent()` re-read one agent's definition and dropped its caches.",
  ],
  "permissions.computed": [
    { rules: list(record) },
    {
      agentId: str,
      reason: oneOf("run_started", "skill_loaded"),
      enabled: list(str),
      skills: list(str),
      tools: typed<Record<string, Record<string, unknown>>>("Record<string, object>"),
    },
    "An agent's effective permission policy was computed for a run (`reason`: `run_started`, or `skill_loaded` when a skill loaded during it): its rules and each tool's verdict.",
  ],
});

type Flatten<T> = { [K in keyof T]: T[K] } & {};

/** The payload a row declares: its required keys, then its optional ones. */
type PayloadOf<Row extends EventRow> = Flatten<
  { -readonly [K in keyof Row[0]]: FieldTypeOf<Row[0][K]> } & {
    -readonly [K in keyof Row[1]]?: FieldTypeOf<Row[1][K]>;
  }
>;

/** The payload type of every event Keel emits, by name, read from the same rows as `EVENT_SCHEMAS`. */
export type EventPayloads = { [Name in keyof typeof EVENTS]: PayloadOf<(typeof EVENTS)[Name]> };

/** The name of an event Keel emits. */
export type EventName = keyof EventPayloads;

function toSchema(name: string, [required, optional, description]: EventRow): EventSchema {
  return Object.freeze({
    name,
    requiredPayload: Object.freeze(Object.keys(required)),
    optionalPayload: Object.freeze(Object.keys(optional)),
    fields: Object.freeze({ ...required, ...optional }),
    description,
  });
}

// A Map for lookups: a plain object would answer for "constructor" or "toString".
const BY_NAME: ReadonlyMap<string, EventSchema> = new Map(
  Object.entries(EVENTS as Readonly<Record<string, EventRow>>).map(([name, row]) => [
    name,
    toSchema(name, row),
  ]),
);

/** Every event Keel emits, by name, in taxonomy order. */
export const EVENT_SCHEMAS: Readonly<Record<string, EventSchema>> = Object.freeze(
  Object.fromEntries(BY_NAME),
);

/** The schema of a declared event, or `undefined` for a name Keel does not declare. */
export function getEventSchema(name: string): EventSchema | undefined {
  return BY_NAME.get(name);
}

/**
 * The required payload keys `payload` lacks; empty for undeclared names, which pass unchecked. A key that is
 * present counts even when its value is `undefined` (a tool that returns nothing still has a `result`).
 */
export function checkEventPayload(name: string, payload: Readonly<Record<string, unknown>>): string[] {
  const schema = BY_NAME.get(name);
  if (schema === undefined) return [];
  const required = schema.requiredPayload;
  let missing: string[] | undefined;
  for (let index = 0; index < required.length; index++) {
    const key = required[index] as string;
    if (key in payload) continue;
    if (missing === undefined) missing = [];
    missing.push(key);
  }
  return missing ?? [];
}

/** True when `payload` has every required key of its declared event; allocation-free for the publish path. */
export function hasRequiredPayload(schema: EventSchema, payload: Readonly<Record<string, unknown>>): boolean {
  const required = schema.requiredPayload;
  for (let index = 0; index < required.length; index++) {
    if (!((required[index] as string) in payload)) return false;
  }
  return true;
}
