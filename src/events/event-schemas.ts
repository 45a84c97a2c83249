/** The taxonomy of every event Keel emits; `docs/events.md` is generated from it. */
export interface EventSchema {
  readonly name: string;
  /** Payload keys every emitter must set; a missing one is logged as a warning, never thrown. */
  readonly requiredPayload: readonly string[];
  readonly optionalPayload: readonly string[];
  /** One sentence: what happened and when it is emitted. */
  readonly description: string;
}

type SchemaRow = readonly [name: string, required: string, optional: string, description: string];

// One row per event: compact to read and review, turned into frozen `EventSchema` objects below.
const ROWS: readonly SchemaRow[] = [
  // run lifecycle
  [
    "run.started",
    "resumed",
    "",
    "A run entered its step loop, first at start and again after each resume (`resumed: true`).",
  ],
  [
    "run.finished",
    "result",
    "",
    "A run ended with any stop reason; always the run's last event, carrying the RunResult.",
  ],
  ["run.failed", "error errorDetails", "", "A run ended with an error; emitted just before `run.finished`."],
  [
    "run.cancelled",
    "",
    "reason",
    "A run was cancelled by `cancel()` or its AbortSignal; emitted just before `run.finished`.",
  ],
  [
    "step.started",
    "step",
    "resumed",
    "A step of the run loop began (steps count from 1); `resumed` when a resumed run re-enters a step a checkpoint caught in flight.",
  ],
  ["step.finished", "step", "action", "A step reached StepEnd, after its model call and tool calls."],
  // models
  ["llm.called", "model hasTools", "", "A model call is about to be sent, after BeforeInference."],
  ["llm.delta", "text", "", "The model streamed a piece of answer text."],
  [
    "llm.reasoning",
    "text",
    "",
    "The model streamed a piece of reasoning text, which is never part of the answer.",
  ],
  ["llm.finished", "model", "usage stopReason durationMs", "A model call returned its complete response."],
  ["llm.failed", "model error errorDetails", "", "A model call failed after its retries were spent."],
  ["usage.updated", "usage", "", "The run's token and cost totals changed after a model call."],
  [
    "budget.cost_skipped",
    "limit reason model",
    "",
    "`maxCostUsd` is set but the cost is unknown (`model` has no price), so the cost limit is not enforced; emitted once per run.",
  ],
  // tools
  ["tool.started", "toolCallId toolId params", "", "A tool call passed its gate and began to execute."],
  ["tool.delta", "toolCallId toolId text", "", "A streaming tool produced a piece of output."],
  ["tool.completed", "toolCallId toolId result durationMs", "", "A tool call succeeded with its result."],
  [
    "tool.failed",
    "toolCallId toolId error",
    "code rule durationMs",
    "A tool call failed, was refused by policy, permission or sandbox (`rule`), or was denied.",
  ],
  [
    "tool.suspended",
    "toolCallId toolId params resumeMode",
    "reason",
    "A tool call stopped to wait for a human decision; the run will end `suspended`.",
  ],
  [
    "tool.decision",
    "toolCallId toolId action",
    "result reason decisionId always sticky",
    "A decision (`approve`, `deny` or `result` with its value as `result`) was applied to a suspended tool call; `sticky` when an `always` decision answered it.",
  ],
  [
    "tool.retry_requested",
    "toolId attempt error",
    "toolCallId delayMs",
    "The `retry` executor will run a failed tool call again after `delayMs`, as attempt number `attempt`.",
  ],
  [
    "tool.batch.started",
    "batchId toolCallIds concurrentCount",
    "",
    "A batch of tool calls began, `concurrentCount` of them running together.",
  ],
  [
    "tool.batch.completed",
    "batchId successes failures durationMs",
    "",
    "Every tool call of a batch finished.",
  ],
  [
    "tool.preflight",
    "toolId result durationMs",
    "error",
    "A tool's `preflight()` ran before the session's first turn; `result` is `ok` or `failed`.",
  ],
  [
    "tool.mcp.preflight",
    "toolId server result durationMs",
    "error toolCount",
    "An MCP toolset with `probe_on_preflight` connected to its server and listed its tools, once per session.",
  ],
  [
    "tool.mcp.connect",
    "toolId server mode",
    "success durationMs error reconnect",
    "An MCP toolset connected to its server (`success: false` with the error's class and code when it could not; `reconnect` after a dead or stale session); never arguments or headers.",
  ],
  [
    "tool.mcp.call",
    "toolId toolName success durationMs",
    "error server mode",
    "An MCP toolset called one of its server's tools (`toolName` is the server's name for it); never arguments or results, `error` is the error's class and code or `tool_error`.",
  ],
  [
    "tool.mcp.close",
    "toolId server",
    "durationMs mode",
    "An MCP toolset closed a connection: after a per-call call, on `releaseSession`, on `close()` or a stale session.",
  ],
  [
    "tool.background.submitted",
    "toolId toolCallId jobId",
    "",
    "A tool call was submitted as a background job to be polled later.",
  ],
  // outputs
  ["artifact", "name kind payload", "", "A pattern or tool added an artifact to the run's result."],
  [
    "validation.retry",
    "attempt error",
    "",
    "The final output did not match `outputType`, so the pattern runs again with the validation error.",
  ],
  // patterns
  [
    "pattern.step_started",
    "step",
    "planStep",
    "A pattern began one of its own steps (a plan step for `plan_execute`).",
  ],
  ["pattern.step_finished", "step action", "", "A pattern finished one of its steps with the named action."],
  ["pattern.phase", "phase", "", "A pattern moved to another phase (such as planning or executing)."],
  ["pattern.plan_created", "plan", "", "The `plan_execute` pattern produced its plan."],
  // context and memory
  ["context.assemble.started", "", "", "The context assembler began building the run's transcript."],
  [
    "context.assemble.completed",
    "transcriptSize artifactCount durationMs",
    "",
    "The context assembler built the transcript and loaded the session's artifacts.",
  ],
  ["memory.inject.started", "", "", "Memory began injecting its view into the run before the first step."],
  ["memory.inject.completed", "viewSize", "", "Memory injected its view into the run."],
  ["memory.inject_failed", "error", "", "Memory injection failed; the run goes on without it."],
  ["memory.writeback.started", "", "", "Memory began writing the finished run back."],
  ["memory.writeback.completed", "", "", "Memory wrote the finished run back."],
  ["memory.writeback_failed", "error", "", "Memory writeback failed; the run's result is unaffected."],
  [
    "memory.write_mode",
    "mode",
    "",
    "The run's memory tools write in this mode: `disabled`, `candidate` or `external`; logged when the run starts.",
  ],
  // sessions and durable runs
  [
    "session.acquired",
    "sessionId",
    "",
    "A run obtained its session's exclusive scope, after waiting its turn.",
  ],
  [
    "run.checkpoint_saved",
    "checkpointId step transcriptLength",
    "phase",
    "A checkpoint was written; its id is a valid `resumeFromCheckpoint` target.",
  ],
  [
    "run.checkpoint_failed",
    "checkpointId error",
    "errorCode",
    "Writing a checkpoint failed; the run goes on.",
  ],
  [
    "run.resume_attempted",
    "checkpointId attempt errorCode",
    "errorType delayMs",
    "A durable run hit a retryable error and resumes from its latest checkpoint (checkpointId null: from its start, when the error came before any checkpoint).",
  ],
  [
    "run.resume_succeeded",
    "checkpointId attempt",
    "",
    "A durable run resumed from a checkpoint and is running again.",
  ],
  [
    "run.resume_exhausted",
    "attempt errorCode limit",
    "errorType",
    "A durable run spent `maxResumeAttempts` and ends failed with the last error.",
  ],
  [
    "tool.outcome_unknown",
    "toolCallId toolId",
    "hint",
    "A resumed run found a call of a non-idempotent tool that started but left no result; it is suspended for a decision rather than run again.",
  ],
  [
    "run.durable_idempotency_warning",
    "toolId hint",
    "",
    "A durable run uses a tool that is not idempotent; emitted once per run and tool.",
  ],
  // runtime
  [
    "config.reloaded",
    "oldVersion newVersion changedAgents",
    "",
    "`reload()` re-read the config file and replaced the agent definitions.",
  ],
  ["agent.reloaded", "agentId", "", "`reloadAgent()` re-read one agent's definition and dropped its caches."],
  [
    "permissions.computed",
    "rules",
    "agentId reason enabled skills tools",
    "An agent's effective permission policy was computed for a run (`reason`: `run_started`, or `skill_loaded` when a skill loaded during it): its rules and each tool's verdict.",
  ],
];

function toSchema([name, required, optional, description]: SchemaRow): EventSchema {
  return Object.freeze({
    name,
    requiredPayload: Object.freeze(required ? required.split(" ") : []),
    optionalPayload: Object.freeze(optional ? optional.split(" ") : []),
    description,
  });
}

// A Map for lookups: a plain object would answer for "constructor" or "toString".
const BY_NAME: ReadonlyMap<string, EventSchema> = new Map(ROWS.map((row) => [row[0], toSchema(row)]));

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
