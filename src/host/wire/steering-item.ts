import { z } from "zod";
import {
  ActorContextSchema,
  AgentEventContextSchema,
  AgentInputSchema,
  ConversationContextSchema,
  SubjectContextSchema,
} from "./run-context.js";

/**
 * One follow-up input a live run pulls from its host (`steering_pull`): the event it came with, its input, and
 * who sent it, as the run context shows the run's own event. Read leniently, like the context.
 */
export const SteeringInputItemSchema = z.looseObject({
  claimed_run_id: z.string(),
  runner_id: z.string(),
  /** Unix epoch seconds. */
  claimed_at: z.number().int().nullish(),
  event: AgentEventContextSchema,
  input: AgentInputSchema,
  conversation: ConversationContextSchema.nullish(),
  actor: ActorContextSchema.nullish(),
  subject: SubjectContextSchema.nullish(),
  metadata: z.record(z.string(), z.unknown()).default({}),
});
export type SteeringInputItem = z.infer<typeof SteeringInputItemSchema>;

/** `all` takes every queued item, `one-at-a-time` the oldest (`one` is read as the same). */
export type SteeringPullMode = "all" | "one-at-a-time";

/** The most items one pull returns, whatever its limit says. */
export const MAX_STEERING_ITEMS_PER_PULL = 50;
