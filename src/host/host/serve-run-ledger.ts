import { PROXY_ACTIONS } from "../runner/host-run-api.js";
import type { ActionChannel } from "../transport/action-channel.js";
import { AgentApiError, AGENT_API_ERROR_CODES as CODES } from "../wire/api-error.js";
import { nowSeconds } from "../wire/now-seconds.js";
import { parseRunResult } from "../wire/run-result.js";
import { boundedLimit } from "./proxy-helpers.js";
import type { Check, RunApiProxy } from "./run-api-proxy.js";
import { RUN_STATUSES, type RunLedger, type RunLedgerRecord } from "./run-ledger.js";
import type { RunSession } from "./run-session.js";

const FINAL_STATUSES = new Set(["completed", "failed", "cancelled"]);

/**
 * The run ledger, behind the proxy's checks. A runner reads its own runs: the run it is in, and the runs of the
 * same runner and binding in the conversations its grant covers (`run_get`, `run_list`, `run_events_page`); any
 * other run is `not_found`, as if it did not exist. It acts only on the run it is in (`run_cancel`,
 * `run_append_result`, `run_finalize`); naming another is `unauthorized`.
 */
export function serveRunLedger(proxy: RunApiProxy, channel: ActionChannel, ledger: RunLedger): void {
  const ownRun: Check["resource"] = (data, session) => {
    const target = targetOf(data, session);
    return { name: `run:${target}`, granted: target === session.runId };
  };
  const visible = async (data: Record<string, unknown>, session: RunSession) => {
    const record = await ledger.get(targetOf(data, session));
    if (!record || !readable(record, session))
      throw new AgentApiError(CODES.NOT_FOUND, "no such run for this runner");
    return record;
  };
  proxy.serve(channel, { action: PROXY_ACTIONS.RUN_GET, api: "run_get" }, async (data, session) =>
    publicRun(await visible(data, session)),
  );
  proxy.serve(
    channel,
    {
      action: PROXY_ACTIONS.RUN_LIST,
      api: "run_list",
      resource: (data, session) => {
        const requested =
          typeof data.conversation_id === "string" ? data.conversation_id : session.event.conversation_id;
        return {
          name: `conversation:${requested ?? ""}`,
          granted: requested == null || session.grant.conversations.has(requested),
        };
      },
    },
    async (data, session) => {
      const statuses = data.statuses ?? null;
      if (
        statuses !== null &&
        (!Array.isArray(statuses) ||
          statuses.some((status) => !(RUN_STATUSES as readonly unknown[]).includes(status)))
      )
        throw new AgentApiError(CODES.INVALID_ARGUMENT, `statuses are among ${RUN_STATUSES.join(", ")}`);
      const conversationId =
        typeof data.conversation_id === "string" ? data.conversation_id : session.event.conversation_id;
      const limit = boundedLimit(data.limit, 50);
      if (!conversationId) {
        // A run outside any conversation sees only itself.
        const own = await ledger.get(session.runId);
        const items =
          own && (statuses === null || (statuses as string[]).includes(own.status)) ? [publicRun(own)] : [];
        return { items, next_cursor: null, prev_cursor: null, has_more: false, total_count: items.length };
      }
      const before = typeof data.before_cursor === "string" ? Number(data.before_cursor) : null;
      const page = await ledger.list({
        runnerId: session.runnerId,
        bindingId: session.binding.binding_id,
        conversationIds: new Set([conversationId]),
        statuses: statuses as string[] | null,
        beforeId: before !== null && Number.isSafeInteger(before) ? before : null,
        limit,
      });
      const items = page.items.map(publicRun);
      return {
        items,
        next_cursor: page.hasMore ? String(page.items.at(-1)!.id) : null,
        prev_cursor: null,
        has_more: page.hasMore,
        total_count: page.total,
      };
    },
  );
  proxy.serve(
    channel,
    { action: PROXY_ACTIONS.RUN_EVENTS_PAGE, api: "run_events_page" },
    async (data, session) => {
      const record = await visible(data, session);
      const direction = data.direction === "backward" ? "backward" : "forward";
      const sequence = (value: unknown) => {
        const parsed = typeof value === "string" ? Number(value) : Number.NaN;
        return Number.isSafeInteger(parsed) ? parsed : null;
      };
      const page = await ledger.events(record.run_id, {
        afterSequence: sequence(data.after_cursor),
        beforeSequence: sequence(data.before_cursor),
        limit: boundedLimit(data.limit, 50),
        direction,
      });
      return {
        items: page.items,
        next_cursor: page.hasMore ? String(page.items.at(-1)!.sequence) : null,
        prev_cursor: page.items[0] ? String(page.items[0].sequence) : null,
        has_more: page.hasMore,
        total_count: page.total,
      };
    },
  );
  proxy.serve(
    channel,
    { action: PROXY_ACTIONS.RUN_CANCEL, api: "run_cancel", resource: ownRun },
    async (data, session) => {
      session.control.cancel(typeof data.reason === "string" ? data.reason : null);
      return publicRun((await ledger.update(session.runId, {}))!);
    },
  );
  proxy.serve(
    channel,
    { action: PROXY_ACTIONS.RUN_APPEND_RESULT, api: "run_append_result", resource: ownRun },
    async (data, session) => {
      const parsed = parseRunResult(data.result);
      if (!parsed.ok) throw new AgentApiError(CODES.INVALID_ARGUMENT, `not a run result: ${parsed.error}`);
      const result = parsed.result ?? parsed.unknown;
      if (!parsed.result)
        throw new AgentApiError(
          CODES.INVALID_ARGUMENT,
          `a result of unknown type ${result.type} cannot be appended`,
        );
      if (result.run_id !== session.runId)
        throw new AgentApiError(CODES.INVALID_ARGUMENT, "an appended result must carry the run's own run_id");
      if (result.type === "run.completed" || result.type === "run.failed")
        throw new AgentApiError(
          CODES.INVALID_ARGUMENT,
          "a run ends by its stream or by run_finalize, not by an appended result",
        );
      // The stream's sequence numbers are the stream's own; an appended result takes its place in the ledger.
      const applied = await session.control.append({
        ...(data.result as Record<string, unknown>),
        sequence: null,
      });
      if (!applied)
        throw new AgentApiError(CODES.INVALID_ARGUMENT, "the host refused the result's side effect");
      return {
        ...(await ledger.appendEvent({
          run_id: session.runId,
          type: applied.type,
          data: applied.data as Record<string, unknown>,
          usage: (applied.usage as Record<string, unknown> | undefined) ?? null,
          created_at: applied.timestamp ?? nowSeconds(),
          source: "append",
          metadata: {},
        })),
      };
    },
  );
  proxy.serve(
    channel,
    { action: PROXY_ACTIONS.RUN_FINALIZE, api: "run_finalize", resource: ownRun },
    async (data, session) => {
      const status = data.status ?? "completed";
      if (typeof status !== "string" || !FINAL_STATUSES.has(status))
        throw new AgentApiError(
          CODES.INVALID_ARGUMENT,
          "a run is finalized as completed, failed or cancelled",
        );
      const reason = typeof data.reason === "string" ? data.reason : null;
      session.control.finalize(status as "completed" | "failed" | "cancelled", reason);
      return publicRun(
        (await ledger.update(session.runId, {
          status: status as RunLedgerRecord["status"],
          status_reason: reason,
          finished_at: nowSeconds(),
        }))!,
      );
    },
  );
}

function targetOf(data: Record<string, unknown>, session: RunSession): string {
  return typeof data.target_run_id === "string" && data.target_run_id.length > 0
    ? data.target_run_id
    : session.runId;
}

/** The run itself, or a run of the same runner and binding in a conversation the run's grant covers. */
function readable(record: RunLedgerRecord, session: RunSession): boolean {
  if (record.run_id === session.runId) return true;
  return (
    record.runner_id === session.runnerId &&
    record.binding_id === session.binding.binding_id &&
    record.conversation_id !== null &&
    session.grant.conversations.has(record.conversation_id)
  );
}

/** A ledger record as the protocol's `AgentRun`. */
function publicRun(record: RunLedgerRecord) {
  return { ...record };
}
