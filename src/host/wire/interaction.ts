import { z } from "zod";

/**
 * Structured interactions: a runner asks the host to put a form, a confirmation or a choice in front of the user
 * (`action.requested` with action `interaction.requested`); the user's answer comes back to the runner as a new
 * run whose event is `interaction.submitted` and whose `input.interaction` is the submission. The bounds are the
 * protocol's own; the host refuses anything outside them rather than cutting it.
 */

export const INTERACTION_REQUESTED_ACTION = "interaction.requested";
export const INTERACTION_SUBMITTED_EVENT = "interaction.submitted";

/** A request's JSON may take at most this many UTF-8 bytes. */
export const MAX_INTERACTION_BYTES = 256 * 1024;
/** How long a request waits for its answer when it names no `expires_at`: 30 minutes. */
export const DEFAULT_INTERACTION_TTL_SECONDS = 30 * 60;
/** The longest a request may wait: 24 hours. */
export const MAX_INTERACTION_TTL_SECONDS = 24 * 60 * 60;

export const INTERACTION_FIELD_TYPES = [
  "text",
  "textarea",
  "select",
  "multiselect",
  "number",
  "boolean",
  "file",
] as const;

const JsonValueSchema = z.json();
const text = (min: number, max: number) => z.string().min(min).max(max);

export const InteractionOptionSchema = z.strictObject({
  value: text(1, 512),
  label: text(1, 512),
  description: z.string().max(2000).nullish(),
});

export const InteractionFieldSchema = z.strictObject({
  id: text(1, 128),
  label: text(1, 512),
  type: z.enum(INTERACTION_FIELD_TYPES),
  required: z.boolean().default(false),
  options: z.array(InteractionOptionSchema).max(100).default([]),
  placeholder: z.string().max(1000).nullish(),
  default: JsonValueSchema.optional(),
});

export const InteractionActionSchema = z.strictObject({
  id: text(1, 128),
  label: text(1, 512),
  style: z.enum(["default", "primary", "danger"]).default("default"),
});

export const InteractionRequestSchema = z.strictObject({
  interaction_id: text(1, 255),
  kind: z.enum(["form", "confirmation", "choice"]).default("form"),
  title: text(1, 1000),
  description: z.string().max(10_000).nullish(),
  fields: z.array(InteractionFieldSchema).max(50).default([]),
  actions: z.array(InteractionActionSchema).max(20).default([]),
  /** Unix epoch seconds. */
  expires_at: z.number().int().nullish(),
  fallback_text: text(1, 20_000),
});
/** What a runner asks the user, as the host validated it. */
export type InteractionRequest = z.infer<typeof InteractionRequestSchema>;
export type InteractionRequestInput = z.input<typeof InteractionRequestSchema>;

export const InteractionSubmissionSchema = z.strictObject({
  interaction_id: text(1, 255),
  action_id: z.string().max(128).nullish(),
  values: z.record(z.string(), JsonValueSchema).default({}),
  /** Unix epoch seconds. */
  submitted_at: z.number().int().nullish(),
});
/** The user's answer to an interaction, as the new run's `input.interaction` carries it. */
export type InteractionSubmission = z.infer<typeof InteractionSubmissionSchema>;
export type InteractionSubmissionInput = z.input<typeof InteractionSubmissionSchema>;
