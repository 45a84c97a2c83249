import { PROXY_ACTIONS } from "../runner/host-run-api.js";
import type { ActionChannel } from "../transport/action-channel.js";
import { AgentApiError, AGENT_API_ERROR_CODES as CODES } from "../wire/api-error.js";
import { nowSeconds } from "../wire/now-seconds.js";
import { MAX_STEERING_ITEMS_PER_PULL, type SteeringInputItem } from "../wire/steering-item.js";
import type { AgentEventEnvelope } from "./agent-binding.js";
import type { RunApiProxy } from "./run-api-proxy.js";
import { conversationContextOf, eventContextOf } from "./run-context-builder.js";
import type { RunSession } from "./run-session.js";

/**
 * The newer text's two context pulls, behind the proxy's checks: `get_prompt` answers the binding's prompt
 * (`{prompt: [{role, content}, …]}`), `steering_pull` hands the run the follow-up inputs the host application
 * gave it with `host.steer`, oldest first, each taken once. A run its context did not offer them to is refused
 * `unauthorized`, like any call outside its grant.
 */
export function servePulls(proxy: RunApiProxy, channel: ActionChannel): void {
  proxy.serve(channel, { action: PROXY_ACTIONS.GET_PROMPT, api: "prompt_get" }, async (_data, session) => ({
    prompt: session.binding.prompt ?? [],
  }));
  proxy.serve(
    channel,
    { action: PROXY_ACTIONS.STEERING_PULL, api: "steering_pull" },
    async (data, session) => {
      const mode = data.mode ?? "all";
      if (mode !== "all" && mode !== "one-at-a-time" && mode !== "one")
        throw new AgentApiError(
          CODES.INVALID_ARGUMENT,
          `steering mode is "all" or "one-at-a-time", not ${String(mode)}`,
        );
      const limit = data.limit ?? null;
      if (limit !== null && (!Number.isSafeInteger(limit) || (limit as number) < 1))
        throw new AgentApiError(CODES.INVALID_ARGUMENT, "a steering limit is a whole number, 1 or more");
      const count =
        mode === "all"
          ? Math.min((limit as number | null) ?? MAX_STEERING_ITEMS_PER_PULL, MAX_STEERING_ITEMS_PER_PULL)
          : 1;
      const taken = session.steering.splice(0, count);
      const claimedAt = nowSeconds();
      // Taken is claimed: the input becomes part of this run's conversation, as its own event did.
      for (const { event } of taken) await session.control.recordInput(event);
      return { items: taken.map(({ item }) => ({ ...item, claimed_at: claimedAt })) };
    },
  );
}

/** A follow-up input as the run pulls it: the event and who sent it, projected as the run context shows them. */
export function steeringItemOf(session: RunSession, event: AgentEventEnvelope): SteeringInputItem {
  return {
    claimed_run_id: session.runId,
    runner_id: session.runnerId,
    claimed_at: null,
    event: eventContextOf(event),
    input: event.input,
    conversation: conversationContextOf(event),
    actor: event.actor ?? null,
    subject: event.subject ?? null,
    metadata: {},
  };
}
