import type { SuspendedToolCall } from "../../contracts/run-types.js";
import type { ToolDecision } from "../../contracts/tool-decision.js";
import {
  INTERACTION_REQUESTED_ACTION,
  type InteractionRequestInput,
  type InteractionSubmission,
  InteractionSubmissionSchema,
} from "../wire/interaction.js";
import type { DeliveryContext } from "../wire/run-context.js";
import { describeIssues, type RunResultBody } from "../wire/run-result.js";

/**
 * A suspended Keel run's decisions as the host's interactions: each call waiting for a yes or no becomes a
 * confirmation (approve, approve for the rest of the run, deny), each call waiting for a value a form with one
 * field. The interaction's id names the run and the call, so the answer — a new run of the runner — finds both
 * from the id alone, with no table kept between runs.
 */

/** The actions of Keel's interactions; `approve_always` approves this call and the tool's later calls in the run. */
export const SUSPENSION_ACTIONS = {
  APPROVE: "approve",
  ALWAYS: "approve_always",
  DENY: "deny",
  SUBMIT: "submit",
} as const;

/** The one field of a form asking for a value. */
export const ANSWER_FIELD = "value";

/** What a failed answer's `run.failed` says, beyond the protocol's own codes. */
export const INTERACTION_FAILURE_CODES = {
  /** The id is not one Keel made. */
  UNKNOWN: "runner.interaction_unknown",
  /** The run or call the id names no longer waits (decided by text, cancelled, finished, or another run waits). */
  STALE: "runner.interaction_stale",
  /** The answer does not fit what was asked; the question is asked again. */
  INVALID: "runner.interaction_invalid",
} as const;

const PREFIX = "keel:";
/** The protocol's bound on an interaction id. */
const MAX_ID_LENGTH = 255;

/** The interaction id of one suspended call: both parts URI-encoded, so the separator is unambiguous. */
export function suspensionInteractionId(runId: string, toolCallId: string): string {
  return `${PREFIX}${encodeURIComponent(runId)}:${encodeURIComponent(toolCallId)}`;
}

/** The run and call an interaction id names, or undefined for an id Keel did not make. */
export function parseSuspensionInteractionId(id: string): { runId: string; toolCallId: string } | undefined {
  if (!id.startsWith(PREFIX)) return undefined;
  const parts = id.slice(PREFIX.length).split(":");
  if (parts.length !== 2 || parts[0] === "" || parts[1] === "") return undefined;
  try {
    return { runId: decodeURIComponent(parts[0]!), toolCallId: decodeURIComponent(parts[1]!) };
  } catch {
    return undefined;
  }
}

/** What the platform can show, from the delivery's `interactions`; undefined when it offers none. */
export interface InteractionSupport {
  fieldTypes: ReadonlySet<string> | undefined;
  actionStyles: ReadonlySet<string> | undefined;
}

export function interactionSupportOf(delivery: DeliveryContext): InteractionSupport | undefined {
  const offered = (delivery as { interactions?: unknown }).interactions;
  if (typeof offered !== "object" || offered === null) return undefined;
  // A list the platform gives is what it shows, an empty one nothing; no list, anything.
  const set = (value: unknown) => (Array.isArray(value) ? new Set(value.map(String)) : undefined);
  const { field_types, action_styles, max_fields } = offered as {
    field_types?: unknown;
    action_styles?: unknown;
    max_fields?: unknown;
  };
  return {
    fieldTypes: max_fields === 0 ? new Set() : set(field_types),
    actionStyles: set(action_styles),
  };
}

/**
 * The `action.requested` results asking the user about each suspended call. A call whose id would pass the
 * protocol's 255 characters gets none: the text reply still decides it.
 */
export function suspensionInteractions(
  runId: string,
  calls: readonly SuspendedToolCall[],
  support: InteractionSupport,
): RunResultBody[] {
  return calls.flatMap((call) => {
    const interactionId = suspensionInteractionId(runId, call.toolCallId);
    if (interactionId.length > MAX_ID_LENGTH) return [];
    const payload = asksForValue(call)
      ? valueForm(interactionId, call, support)
      : confirmation(interactionId, call, support);
    if (!payload) return [];
    return [{ type: "action.requested", data: { action: INTERACTION_REQUESTED_ACTION, payload } }];
  });
}

function confirmation(
  interactionId: string,
  call: SuspendedToolCall,
  support: InteractionSupport,
): InteractionRequestInput {
  const style = styleWithin(support);
  return {
    interaction_id: interactionId,
    kind: "confirmation",
    title: clip(`Allow ${call.toolId}?`, 1000),
    description: clip(
      `${call.reason ? `${call.reason}\n` : ""}Arguments: ${JSON.stringify(call.params)}`,
      10_000,
    ),
    fields: [],
    actions: [
      { id: SUSPENSION_ACTIONS.APPROVE, label: "Approve", style: style("primary") },
      { id: SUSPENSION_ACTIONS.ALWAYS, label: "Approve for this run", style: style("default") },
      { id: SUSPENSION_ACTIONS.DENY, label: "Deny", style: style("danger") },
    ],
    fallback_text: clip(
      `The agent wants to call ${call.toolId} with ${JSON.stringify(call.params)}. Reply "approve" or "deny".`,
      20_000,
    ),
  };
}

function valueForm(
  interactionId: string,
  call: SuspendedToolCall,
  support: InteractionSupport,
): InteractionRequestInput | undefined {
  const style = styleWithin(support);
  const field = fieldFor(call, support);
  // A platform that shows no field this answer fits gets no form: the text reply decides the call.
  if (!field) return undefined;
  return {
    interaction_id: interactionId,
    kind: "form",
    title: clip(call.reason ?? `${call.toolId} needs an answer`, 1000),
    description: clip(`Asked by ${call.toolId} with ${JSON.stringify(call.params)}`, 10_000),
    fields: [field],
    actions: [
      { id: SUSPENSION_ACTIONS.SUBMIT, label: "Submit", style: style("primary") },
      { id: SUSPENSION_ACTIONS.DENY, label: "Decline", style: style("danger") },
    ],
    // A text reply decides every waiting call at once with a yes or a no; it cannot carry a value.
    fallback_text: clip(
      `${call.reason ?? `${call.toolId} needs an answer`}. This platform cannot show the form: reply "deny" to decline.`,
      20_000,
    ),
  };
}

/** The field a value is asked in: the type the call's response schema names, when the platform can show it. */
function fieldFor(call: SuspendedToolCall, support: InteractionSupport) {
  const schema = call.responseSchema ?? {};
  const wanted = wantedType(schema);
  const shown = (type: string) => !support.fieldTypes || support.fieldTypes.has(type);
  const base = { id: ANSWER_FIELD, label: clip(call.reason ?? "Answer", 512), required: false };
  if (wanted === "select" && shown("select"))
    return {
      ...base,
      type: "select" as const,
      options: (schema.enum as string[]).map((value) => ({ value, label: clip(value, 512) })),
    };
  if ((wanted === "number" || wanted === "boolean") && shown(wanted)) return { ...base, type: wanted };
  if (wanted === "json" && shown("textarea")) return { ...base, type: "textarea" as const };
  return shown("text") ? { ...base, type: "text" as const } : undefined;
}

type WantedType = "select" | "number" | "boolean" | "string" | "json";

function wantedType(schema: Record<string, unknown>): WantedType {
  const options = schema.enum;
  if (
    Array.isArray(options) &&
    options.length > 0 &&
    options.length <= 100 &&
    options.every((value) => typeof value === "string" && value.length > 0 && value.length <= 512)
  )
    return "select";
  if (schema.type === "number" || schema.type === "integer") return "number";
  if (schema.type === "boolean") return "boolean";
  if (schema.type === "string") return "string";
  return schema.type === undefined ? "string" : "json";
}

/**
 * The decision an answer makes on its call, or why it makes none. A text field's answer is read as the type the
 * call asked for, since a platform without number or boolean fields sends text.
 */
export function decisionOfSubmission(
  call: SuspendedToolCall,
  submission: InteractionSubmission,
): ToolDecision | { invalid: string } {
  const { toolCallId } = call;
  const action = submission.action_id ?? undefined;
  if (action === SUSPENSION_ACTIONS.DENY) return { toolCallId, action: "deny", reason: "denied by the user" };
  if (!asksForValue(call)) {
    if (action === SUSPENSION_ACTIONS.APPROVE || action === undefined)
      return { toolCallId, action: "approve" };
    if (action === SUSPENSION_ACTIONS.ALWAYS) return { toolCallId, action: "approve", always: true };
    return { invalid: `the confirmation has no action ${action}` };
  }
  if (action !== undefined && action !== SUSPENSION_ACTIONS.SUBMIT)
    return { invalid: `the form has no action ${action}` };
  const given = submission.values[ANSWER_FIELD];
  if (given === undefined || given === null || given === "") return { invalid: "the answer is empty" };
  const value = readAs(wantedType(call.responseSchema ?? {}), given);
  if (value === undefined)
    return { invalid: `the answer ${JSON.stringify(given)} does not fit what was asked` };
  return { toolCallId, action: "approve", value };
}

function readAs(wanted: WantedType, given: unknown): unknown {
  if (typeof given !== "string") return given;
  if (wanted === "number") {
    const number = Number(given.trim());
    return given.trim() === "" || Number.isNaN(number) ? undefined : number;
  }
  if (wanted === "boolean") {
    if (/^\s*(true|yes|y)\s*$/i.test(given)) return true;
    if (/^\s*(false|no|n)\s*$/i.test(given)) return false;
    return undefined;
  }
  if (wanted === "json") {
    try {
      return JSON.parse(given) as unknown;
    } catch {
      return undefined;
    }
  }
  return given;
}

/** What a run started by an answer does: resume a waiting run with a decision, or end with a failure. */
export type SubmittedInteraction =
  | { resume: { runId: string; decisions: ToolDecision[] } }
  | { results: RunResultBody[] };

/**
 * Reads the answer a run carries in `input.interaction` against the Keel run waiting in its conversation. Only
 * the run that waits there is resumed, only for a call it still waits on; anything else ends the new run with a
 * `run.failed` whose code says why and whose text says what to do, and resumes nothing.
 */
export async function submittedInteraction(options: {
  interaction: unknown;
  /** The Keel run the conversation's state says waits, if any. */
  waiting: string | undefined;
  getRun: (runId: string) => Promise<{ status: string; pendingToolCalls: SuspendedToolCall[] } | null>;
  support: InteractionSupport | undefined;
}): Promise<SubmittedInteraction> {
  // What went wrong and what to do about it: the protocol's `run.failed` has no field for a hint.
  const fail = (code: string, [error, hint]: [string, string], asked: RunResultBody[] = []) => ({
    results: [
      ...asked,
      { type: "run.failed", data: { code, error: `${error}; hint: ${hint}`, retryable: false } },
    ] satisfies RunResultBody[],
  });
  const parsed = InteractionSubmissionSchema.safeParse(options.interaction);
  if (!parsed.success)
    return fail(INTERACTION_FAILURE_CODES.UNKNOWN, [
      `the run's input.interaction is not an interaction submission: ${describeIssues(parsed.error)}`,
      "send {interaction_id, action_id?, values} as the host received it",
    ]);
  const submission = parsed.data;
  const target = parseSuspensionInteractionId(submission.interaction_id);
  if (!target)
    return fail(INTERACTION_FAILURE_CODES.UNKNOWN, [
      `interaction ${submission.interaction_id} is not one this runner asked`,
      `a Keel runner's interaction ids start with "${PREFIX}"; answer the interaction with its id unchanged`,
    ]);
  const stale = (why: string) =>
    fail(INTERACTION_FAILURE_CODES.STALE, [
      `interaction ${submission.interaction_id} no longer waits: ${why}`,
      "nothing was resumed; send a new message to start afresh",
    ]);
  if (options.waiting !== target.runId)
    return stale(
      options.waiting ? "another run waits in this conversation" : "no run waits in this conversation",
    );
  const record = await options.getRun(target.runId);
  if (record?.status !== "waiting") return stale(`run ${target.runId} is ${record?.status ?? "unknown"}`);
  const call = record.pendingToolCalls.find((pending) => pending.toolCallId === target.toolCallId);
  if (!call) return stale(`call ${target.toolCallId} was already decided`);
  const decision = decisionOfSubmission(call, submission);
  if ("invalid" in decision)
    return fail(
      INTERACTION_FAILURE_CODES.INVALID,
      [
        `the answer to interaction ${submission.interaction_id} was not used: ${decision.invalid}`,
        "answer the interaction asked again",
      ],
      options.support ? suspensionInteractions(target.runId, [call], options.support) : [],
    );
  return { resume: { runId: target.runId, decisions: [decision] } };
}

function asksForValue(call: SuspendedToolCall): boolean {
  return call.resumeMode !== "replay_tool_call";
}

/** A style the platform shows, else `default` — which every platform shows. */
function styleWithin(support: InteractionSupport) {
  return (style: "default" | "primary" | "danger") =>
    !support.actionStyles || support.actionStyles.has(style) ? style : ("default" as const);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
