import type { RunTraceContext } from "../../contracts/run-types.js";
import { activeTraceContext } from "../../events/active-trace-context.js";
import { RUNNER_ACTIONS } from "../runner/keel-runner.js";
import {
  ActionCallTimeoutError,
  CHANNEL_ERROR_CODES,
  ChannelBusyError,
  ChannelClosedError,
} from "../transport/channel-errors.js";
import { nowSeconds } from "../wire/now-seconds.js";
import { type AgentRunResult, RUN_FAILURE_CODES } from "../wire/run-result.js";
import type { AgentBinding, AgentEventEnvelope } from "./agent-binding.js";
import type { HostStores } from "./host-stores.js";
import type { PendingInteraction, PendingInteractions } from "./pending-interactions.js";
import { ResultApplier } from "./result-applier.js";
import { availableApisOf, buildRunContext, deadlineOf } from "./run-context-builder.js";
import type { RunLedger, RunLedgerRecord } from "./run-ledger.js";
import {
  computeRunGrant,
  type HostResourceIndex,
  type RunGrant,
  type RunSession,
  stateKeysOf,
} from "./run-session.js";
import type { RunnerDescriptor } from "./runner-registry.js";

/** What a run needs of its host. */
export interface HostRunDeps {
  sessions: Map<string, RunSession>;
  findRunner(runnerId: string): Promise<RunnerDescriptor | undefined>;
  resources: HostResourceIndex;
  stores: HostStores;
  ledger: RunLedger;
  interactions: PendingInteractions;
  authorize?: ((grant: RunGrant, event: AgentEventEnvelope) => RunGrant) | undefined;
  onInteraction?: ((interaction: PendingInteraction) => void) | undefined;
  onUnclaimedSteering?: ((runId: string, events: AgentEventEnvelope[]) => void) | undefined;
  cancelGraceMs: number;
  warn(message: string): void;
}

/** What starts one run: its event and binding, its id, and the controller that cancels it. */
export interface HostRunStart {
  runId: string;
  event: AgentEventEnvelope;
  binding: AgentBinding;
  cancel: AbortController;
  traceContext?: RunTraceContext | undefined;
}

/**
 * One run, from its event to its last result: the grant, the context, the session the proxy checks calls
 * against, the ledger record, and the stream read under the deadline and a cancel, with the results the runner
 * appends through the proxy delivered in between. Every way it ends is a final result; the session is always
 * removed.
 */
export async function* streamHostRun(deps: HostRunDeps, run: HostRunStart): AsyncIterable<AgentRunResult> {
  const { stores, ledger } = deps;
  const { event, binding, cancel, runId } = run;
  const fail = (code: string, error: string, retryable = false): AgentRunResult => ({
    run_id: runId,
    type: "run.failed",
    data: { code, error, retryable },
    timestamp: nowSeconds(),
  });
  const now = Date.now() / 1000;
  await ledger.create(newRecord(runId, event, binding));
  let last: AgentRunResult | undefined;
  let finalized: { status: "completed" | "failed" | "cancelled"; reason: string | null } | undefined;
  const deliver = async (result: AgentRunResult, source: "stream" | "append") => {
    last = result;
    // Deltas are left out: the completed message carries their text, and a long answer has thousands.
    if (result.type !== "message.delta")
      await ledger.appendEvent({
        run_id: runId,
        type: result.type,
        data: result.data as Record<string, unknown>,
        usage: (result.usage as Record<string, unknown> | undefined) ?? null,
        created_at: result.timestamp ?? nowSeconds(),
        source,
        metadata: result.sequence == null ? {} : { runner_sequence: result.sequence },
      });
    return result;
  };
  const session = () => deps.sessions.get(runId);
  try {
    if (!binding.enabled)
      return yield await deliver(
        fail("binding.disabled", `binding ${binding.binding_id} is disabled`),
        "stream",
      );
    const runner = await deps.findRunner(binding.runner_id);
    if (!runner)
      return yield await deliver(
        fail(RUN_FAILURE_CODES.NOT_FOUND, `no attached runtime serves ${binding.runner_id}`),
        "stream",
      );
    const deadlineAt = deadlineOf(binding, now);
    const grant = computeRunGrant({
      manifest: runner.manifest,
      binding,
      event,
      resources: deps.resources,
      authorize: deps.authorize,
    });
    const stateKeys = stateKeysOf(runner.id, binding, event);
    const conversationId = event.conversation_id ?? null;
    const context = await buildRunContext({
      runId,
      event,
      binding,
      manifest: runner.manifest,
      grant,
      resources: deps.resources,
      stateKeys,
      stores,
      deadlineAt,
      hostVersion: "keel",
      traceContext: run.traceContext ?? (await activeTraceContext()),
    });
    const applier = new ResultApplier({
      runId,
      runnerId: runner.id,
      event,
      stateKeys,
      channel: runner.channel,
      stores,
      warn: deps.warn,
      interactions: {
        permissions: runner.manifest.permissions,
        binding,
        pending: deps.interactions,
        onRequested: deps.onInteraction,
      },
    });
    // Results the runner appends through the proxy wait here for the stream's reader, which `wake` rouses.
    const appended: AgentRunResult[] = [];
    let wake = () => {};
    let woken = new Promise<void>((resolve) => (wake = resolve));
    deps.sessions.set(runId, {
      runId,
      runnerId: runner.id,
      pluginIdentity: `${runner.address.pluginAuthor}/${runner.address.pluginName}`,
      channel: runner.channel,
      permissions: runner.manifest.permissions,
      binding,
      event,
      grant,
      stateKeys,
      deadlineAt,
      calls: 0,
      startedAt: now,
      availableApis: availableApisOf({ manifest: runner.manifest, binding, grant, conversationId }),
      steering: [],
      control: {
        cancel: (reason) => {
          void ledger.update(runId, {
            cancel_requested_at: nowSeconds(),
            ...(reason ? { status_reason: reason } : {}),
          });
          cancel.abort();
        },
        recordInput: (input) => applier.recordEvent(input),
        append: async (value) => {
          const result = await applier.apply(value);
          if (result) {
            appended.push(result);
            wake();
          }
          return result;
        },
        finalize: (status, reason) => {
          finalized ??= { status, reason };
          wake();
        },
      },
    });
    const stopRunner = () =>
      void runner.channel
        .call(RUNNER_ACTIONS.CANCEL, { run_id: runId }, { timeoutMs: 5_000 })
        .catch(() => {});
    await ledger.update(runId, {
      status: "running",
      started_at: nowSeconds(),
      deadline_at: deadlineAt === null ? null : Math.floor(deadlineAt),
    });
    let iterator: AsyncIterator<Record<string, unknown>> | undefined;
    try {
      await applier.recordEvent();
      // Opening the stream sends the request, so a channel that is away (reconnecting) or full fails here.
      iterator = runner.channel
        .stream(
          runner.runAction,
          {
            plugin_author: runner.address.pluginAuthor,
            plugin_name: runner.address.pluginName,
            runner_name: runner.address.runnerName,
            context,
          },
          { timeoutMs: deadlineAt === null ? 300_000 : Math.max(1, (deadlineAt - now) * 1000 + 1000) },
        )
        [Symbol.asyncIterator]();
      let pending: Promise<IteratorResult<Record<string, unknown>>> | undefined;
      let graceUntil: number | undefined;
      for (;;) {
        for (let result = appended.shift(); result; result = appended.shift())
          yield await deliver(result, "append");
        if (finalized) {
          stopRunner();
          return yield await deliver(finalResult(runId, finalized), "append");
        }
        pending ??= iterator.next();
        const waitMs = Math.min(
          deadlineAt === null ? Number.POSITIVE_INFINITY : deadlineAt * 1000 - Date.now(),
          graceUntil === undefined ? Number.POSITIVE_INFINITY : graceUntil - Date.now(),
        );
        const outcome = await raceNext(pending, waitMs, {
          signal: graceUntil === undefined ? cancel.signal : undefined,
          wake: woken,
        });
        if (outcome === "woken") {
          woken = new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        if (outcome === "cancelled") {
          stopRunner();
          graceUntil = Date.now() + deps.cancelGraceMs;
          continue;
        }
        if (outcome === "timeout") {
          stopRunner();
          if (graceUntil !== undefined)
            return yield await deliver(fail(RUN_FAILURE_CODES.CANCELLED, "the run was cancelled"), "stream");
          return yield await deliver(
            fail(RUN_FAILURE_CODES.TIMEOUT, "the run passed its deadline", true),
            "stream",
          );
        }
        pending = undefined;
        if (outcome.done)
          return yield await deliver(
            fail(RUN_FAILURE_CODES.PROTOCOL, "the runner's stream ended without run.completed or run.failed"),
            "stream",
          );
        const result = await applier.apply(outcome.value);
        if (result === undefined) continue;
        yield await deliver(result, "stream");
        if (result.type === "run.completed" || result.type === "run.failed") return;
      }
    } catch (error) {
      if (error instanceof ChannelClosedError)
        yield await deliver(
          fail(RUN_FAILURE_CODES.CHANNEL_LOST, `the runner's channel was lost: ${error.message}`, true),
          "stream",
        );
      else if (error instanceof ActionCallTimeoutError)
        yield await deliver(fail(RUN_FAILURE_CODES.TIMEOUT, "the runner stopped answering", true), "stream");
      else if (error instanceof ChannelBusyError)
        yield await deliver(fail(CHANNEL_ERROR_CODES.BUSY, error.message, true), "stream");
      else
        yield await deliver(
          fail(RUN_FAILURE_CODES.RUNNER_ERROR, error instanceof Error ? error.message : String(error)),
          "stream",
        );
    } finally {
      void iterator?.return?.();
    }
  } finally {
    const leftover = session()?.steering ?? [];
    deps.sessions.delete(runId);
    if (leftover.length > 0)
      deps.onUnclaimedSteering?.(
        runId,
        leftover.map((entry) => entry.event),
      );
    await ledger.update(runId, endOf(last, finalized));
  }
}

function newRecord(
  runId: string,
  event: AgentEventEnvelope,
  binding: AgentBinding,
): Omit<RunLedgerRecord, "id"> {
  const seconds = nowSeconds();
  return {
    run_id: runId,
    event_id: event.event_id,
    binding_id: binding.binding_id,
    runner_id: binding.runner_id,
    conversation_id: event.conversation_id ?? null,
    thread_id: event.thread_id ?? null,
    workspace_id: event.workspace_id ?? null,
    bot_id: event.bot_id ?? null,
    status: "created",
    status_reason: null,
    created_at: seconds,
    started_at: null,
    finished_at: null,
    updated_at: seconds,
    deadline_at: null,
    cancel_requested_at: null,
    usage: null,
    metadata: { event_type: event.event_type },
  };
}

/** The terminal result a runner's `run_finalize` ends its run with. */
function finalResult(
  runId: string,
  finalized: { status: "completed" | "failed" | "cancelled"; reason: string | null },
): AgentRunResult {
  const timestamp = nowSeconds();
  if (finalized.status === "completed")
    return {
      run_id: runId,
      type: "run.completed",
      data: { finish_reason: finalized.reason ?? "stop" },
      timestamp,
    };
  const code = finalized.status === "cancelled" ? RUN_FAILURE_CODES.CANCELLED : "runner.finalized";
  return {
    run_id: runId,
    type: "run.failed",
    data: {
      code,
      error: finalized.reason ?? `the runner finalized the run as ${finalized.status}`,
      retryable: false,
    },
    timestamp,
  };
}

/** The ledger's end of a run: its status from the last result (or the runner's own finalize) and its usage. */
function endOf(
  last: AgentRunResult | undefined,
  finalized: { status: "completed" | "failed" | "cancelled"; reason: string | null } | undefined,
): Partial<RunLedgerRecord> {
  const end = {
    finished_at: nowSeconds(),
    usage: (last?.usage as Record<string, unknown> | undefined) ?? null,
  };
  if (finalized) return { ...end, status: finalized.status, status_reason: finalized.reason };
  if (last?.type === "run.completed")
    return { ...end, status: "completed", status_reason: last.data.finish_reason };
  if (last?.type === "run.failed") {
    const code = last.data.code;
    const status =
      code === RUN_FAILURE_CODES.CANCELLED
        ? "cancelled"
        : code === RUN_FAILURE_CODES.TIMEOUT
          ? "timeout"
          : "failed";
    return { ...end, status, status_reason: code };
  }
  // The caller stopped reading before the run ended.
  return { ...end, status: "cancelled", status_reason: "host.abandoned" };
}

/** The next result, or `timeout` once `waitMs` pass, `cancelled` when `signal` aborts, `woken` when `wake` settles. */
async function raceNext<T>(
  next: Promise<T>,
  waitMs: number,
  until: { signal: AbortSignal | undefined; wake: Promise<void> },
): Promise<T | "timeout" | "cancelled" | "woken"> {
  const { signal, wake } = until;
  if (signal?.aborted) return "cancelled";
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const racers: Promise<T | "timeout" | "cancelled" | "woken">[] = [next, wake.then(() => "woken" as const)];
  if (Number.isFinite(waitMs))
    racers.push(
      new Promise((resolve) => (timer = setTimeout(() => resolve("timeout"), Math.max(0, waitMs)))),
    );
  if (signal) {
    racers.push(
      new Promise((resolve) => {
        onAbort = () => resolve("cancelled");
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    );
  }
  try {
    return await Promise.race(racers);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}
