import { AgentApiError, AGENT_API_ERROR_CODES as CODES } from "../wire/api-error.js";
import {
  DEFAULT_INTERACTION_TTL_SECONDS,
  INTERACTION_SUBMITTED_EVENT,
  type InteractionRequest,
  InteractionRequestSchema,
  type InteractionSubmission,
  type InteractionSubmissionInput,
  InteractionSubmissionSchema,
  MAX_INTERACTION_BYTES,
  MAX_INTERACTION_TTL_SECONDS,
} from "../wire/interaction.js";
import { nowSeconds } from "../wire/now-seconds.js";
import { describeIssues } from "../wire/run-result.js";
import type { AgentBinding, AgentEventEnvelope } from "./agent-binding.js";
import type { HostStores } from "./host-stores.js";

/** Where an interaction came from: the run that asked, and the binding and event its answer runs under. */
export interface InteractionOrigin {
  runId: string;
  runnerId: string;
  binding: AgentBinding;
  event: AgentEventEnvelope;
}

/** An interaction waiting for the user's answer. */
export interface PendingInteraction extends InteractionOrigin {
  request: InteractionRequest;
  /** Unix epoch seconds. */
  expiresAt: number;
}

/**
 * The interactions runners asked for that wait for an answer, each until it expires (30 minutes unless the
 * request says sooner or later, never beyond 24 hours) or is answered — once. At most `maxPending` (10,000) wait
 * at a time; past that the oldest are forgotten, so a runner that asks in a loop cannot grow the host.
 */
export class PendingInteractions {
  private readonly pending = new Map<string, PendingInteraction>();

  constructor(private readonly maxPending = 10_000) {}

  /**
   * Checks a runner's `interaction.requested` payload — the protocol's model, at most 256 KiB of JSON, an expiry
   * within 24 hours — and keeps it. Returns the request as kept (its `expires_at` filled in); throws the
   * {@link AgentApiError} that says why when it is refused.
   */
  request(payload: unknown, origin: InteractionOrigin, nowSeconds: number): PendingInteraction {
    const size = Buffer.byteLength(JSON.stringify(payload ?? null));
    if (size > MAX_INTERACTION_BYTES)
      throw new AgentApiError(
        CODES.PAYLOAD_TOO_LARGE,
        `an interaction request is at most ${MAX_INTERACTION_BYTES} bytes of JSON`,
      );
    const parsed = InteractionRequestSchema.safeParse(payload);
    if (!parsed.success)
      throw new AgentApiError(
        CODES.INVALID_ARGUMENT,
        `not an interaction request: ${describeIssues(parsed.error)}`,
      );
    const request = parsed.data;
    const expiresAt = request.expires_at ?? nowSeconds + DEFAULT_INTERACTION_TTL_SECONDS;
    if (expiresAt <= nowSeconds)
      throw new AgentApiError(CODES.INVALID_ARGUMENT, "the interaction request has already expired");
    if (expiresAt > nowSeconds + MAX_INTERACTION_TTL_SECONDS)
      throw new AgentApiError(
        CODES.INVALID_ARGUMENT,
        "an interaction may wait at most 24 hours for its answer",
        {
          details: { max_ttl_seconds: MAX_INTERACTION_TTL_SECONDS },
        },
      );
    const key = keyOf(origin.runnerId, request.interaction_id);
    const kept: PendingInteraction = { ...origin, request: { ...request, expires_at: expiresAt }, expiresAt };
    this.pending.delete(key);
    this.pending.set(key, kept);
    for (const old of this.pending.keys()) {
      if (this.pending.size <= this.maxPending) break;
      this.pending.delete(old);
    }
    return kept;
  }

  /**
   * Takes the interaction a submission answers, once, and checks the answer against what was asked: an action
   * the request offers, values only for its fields, every required field given, choices among the options.
   */
  submit(
    runnerId: string,
    input: InteractionSubmissionInput,
    nowSeconds: number,
  ): { pending: PendingInteraction; submission: InteractionSubmission } {
    const parsed = InteractionSubmissionSchema.safeParse(input);
    if (!parsed.success)
      throw new AgentApiError(
        CODES.INVALID_ARGUMENT,
        `not an interaction submission: ${describeIssues(parsed.error)}`,
      );
    const submission = { ...parsed.data, submitted_at: parsed.data.submitted_at ?? nowSeconds };
    const key = keyOf(runnerId, submission.interaction_id);
    const pending = this.pending.get(key);
    if (!pending || pending.expiresAt <= nowSeconds) {
      this.pending.delete(key);
      throw new AgentApiError(
        CODES.NOT_FOUND,
        `no interaction ${submission.interaction_id} is waiting for an answer`,
      );
    }
    checkAnswer(pending.request, submission);
    this.pending.delete(key);
    return { pending, submission };
  }

  /**
   * The event and binding of the run that answers an interaction: the binding that asked, the conversation, actor
   * and delivery of the event it was asked in, `interaction.submitted` with the answer as `input.interaction`.
   * A refused answer is audited and thrown; an accepted one is audited too.
   */
  answer(
    stores: HostStores,
    runnerId: string,
    input: InteractionSubmissionInput,
  ): [AgentEventEnvelope, AgentBinding] {
    const now = nowSeconds();
    const audit = (result: string, origin?: PendingInteraction, detail?: string) =>
      void stores.audit.record({
        at: Date.now(),
        run_id: origin?.runId ?? null,
        runner_id: runnerId,
        action: INTERACTION_SUBMITTED_EVENT,
        resource: `interaction:${String((input as { interaction_id?: unknown })?.interaction_id ?? "")}`,
        scope: origin?.event.conversation_id ? `conversation:${origin.event.conversation_id}` : null,
        result,
        ...(detail ? { detail } : {}),
      });
    let answered: ReturnType<PendingInteractions["submit"]>;
    try {
      answered = this.submit(runnerId, input, now);
    } catch (error) {
      if (error instanceof AgentApiError) audit(error.apiCode, undefined, error.message);
      throw error;
    }
    const { pending, submission } = answered;
    audit("ok", pending);
    const asked = pending.event;
    const event: AgentEventEnvelope = {
      ...asked,
      event_id: `${INTERACTION_SUBMITTED_EVENT}:${submission.interaction_id}:${now}`,
      event_type: INTERACTION_SUBMITTED_EVENT,
      event_time: submission.submitted_at ?? now,
      source_event_type: null,
      raw_ref: null,
      input: { contents: [], attachments: [], interaction: submission },
      data: { interaction_id: submission.interaction_id, asked_in_run: pending.runId },
    };
    return [event, pending.binding];
  }

  /** The interactions waiting now, for a host application that lists them. */
  list(nowSeconds: number): PendingInteraction[] {
    for (const [key, pending] of this.pending) if (pending.expiresAt <= nowSeconds) this.pending.delete(key);
    return [...this.pending.values()];
  }
}

function keyOf(runnerId: string, interactionId: string): string {
  return `${runnerId}\u0000${interactionId}`;
}

function checkAnswer(request: InteractionRequest, submission: InteractionSubmission): void {
  const refuse = (message: string): never => {
    throw new AgentApiError(CODES.INVALID_ARGUMENT, message, {
      details: { interaction_id: request.interaction_id },
    });
  };
  if (request.actions.length > 0) {
    if (submission.action_id == null) refuse("the answer must name one of the interaction's actions");
    if (!request.actions.some((action) => action.id === submission.action_id))
      refuse(`the interaction has no action ${String(submission.action_id)}`);
  }
  const fields = new Map(request.fields.map((field) => [field.id, field]));
  for (const [id, value] of Object.entries(submission.values)) {
    const field = fields.get(id);
    if (!field) {
      refuse(`the interaction has no field ${id}`);
      continue;
    }
    const options = new Set(field.options.map((option) => option.value));
    const ok =
      value === null ||
      (field.type === "number"
        ? typeof value === "number"
        : field.type === "boolean"
          ? typeof value === "boolean"
          : field.type === "multiselect"
            ? Array.isArray(value) &&
              value.every((item) => typeof item === "string" && (options.size === 0 || options.has(item)))
            : field.type === "select"
              ? typeof value === "string" && (options.size === 0 || options.has(value))
              : typeof value === "string");
    if (!ok) refuse(`the value of field ${id} does not fit its type ${field.type}`);
  }
  for (const field of request.fields)
    if (field.required && (submission.values[field.id] === undefined || submission.values[field.id] === null))
      refuse(`field ${field.id} is required`);
}
