import { PermanentToolError } from "../errors/error-classes.js";
import { KeelError, toErrorDetails } from "../errors/keel-error.js";
import type { RunEventLog } from "../events/run-event-log.js";
import type { EventBus } from "../events/runtime-event.js";
import { getLogger } from "../logging/logger.js";
import type { CancelScope } from "../loop/cancel-scope.js";
import { runStatusOf } from "../loop/termination.js";
import type { SessionManager } from "../sessions/session-manager.js";
import type { SkillsManager } from "../skills/skills-manager.js";
import type { ResolvedAgent } from "./resolved-agent.js";
import { createRunUsage, type RunRecord, type RunRequest, type RunResult } from "./run-types.js";
import type { RuntimePlugin } from "./runtime-plugin.js";

export interface ExecuteRequestInput {
  agent: ResolvedAgent;
  request: RunRequest & { runId: string; sessionId: string };
  log: RunEventLog;
  scope: CancelScope;
  eventBus: EventBus;
  sessionManager: SessionManager;
  skills: SkillsManager;
  runtime: RuntimePlugin;
}

const preflighted = new WeakMap<ResolvedAgent, Set<string>>();

/**
 * Everything around one run loop: the run's record, the session's exclusive scope, skills and tool
 * preflight once per session, and what the run leaves in the store (messages, artifacts, its event log).
 */
export async function executeRequest(input: ExecuteRequestInput): Promise<RunResult> {
  const { agent, request, log, sessionManager } = input;
  const now = new Date().toISOString();
  const record: RunRecord = {
    runId: request.runId,
    agentId: agent.id,
    sessionId: request.sessionId,
    status: "created",
    pendingToolCalls: [],
    createdAt: now,
    updatedAt: now,
    lastSequence: 0,
  };
  if (request.parentRunId !== undefined) record.parentRunId = request.parentRunId;
  let result: RunResult;
  try {
    await sessionManager.saveRun(record);
    await prepareSkills(input);
    result = await sessionManager.session(
      request.sessionId,
      async (session) => {
        record.status = "running";
        await preflight(input);
        const outcome = await input.runtime.run({
          agent,
          request,
          log,
          scope: input.scope,
          sessionManager,
          sessionState: session.state,
        });
        if (outcome.result.stopReason !== "suspended") {
          for (const message of outcome.newMessages)
            await sessionManager.appendMessage(request.sessionId, message);
          for (const artifact of outcome.result.artifacts)
            await sessionManager.saveArtifact(request.sessionId, artifact);
        }
        return outcome.result;
      },
      { queueSize: agent.limits.sessionQueueSize },
    );
  } catch (error) {
    result = failedBeforeLoop(input, error);
  }
  log.close();
  record.status = runStatusOf(result.termination);
  record.stopReason = result.stopReason;
  record.termination = result.termination;
  record.pendingToolCalls = result.pendingToolCalls;
  record.updatedAt = new Date().toISOString();
  record.lastSequence = log.lastSequence;
  try {
    await sessionManager.appendEvents(request.runId, log.events);
    await sessionManager.saveRun(record);
  } catch (error) {
    getLogger().error(`Could not store run ${request.runId}: ${(error as Error).message}`);
  }
  return result;
}

/** The skills manager caches per session; calling it each run is what lets `rescan()` reach live sessions. */
async function prepareSkills(input: ExecuteRequestInput): Promise<void> {
  await input.skills.prepareSession(input.request.sessionId, input.sessionManager);
}

/** Each tool's `preflight` once per session before its first turn; a failure ends the run before the loop. */
async function preflight(input: ExecuteRequestInput): Promise<void> {
  const { agent, request, log } = input;
  if (agent.preflightTools.length === 0) return;
  let done = preflighted.get(agent);
  if (!done) {
    done = new Set();
    preflighted.set(agent, done);
  }
  if (done.has(request.sessionId)) return;
  for (const [toolId, tool] of agent.preflightTools) {
    const startedAt = performance.now();
    try {
      await tool.preflight?.({
        agentId: agent.id,
        sessionId: request.sessionId,
        runId: request.runId,
      } as never);
      log.emit("tool.preflight", { toolId, result: "ok", durationMs: performance.now() - startedAt });
    } catch (error) {
      log.emit("tool.preflight", {
        toolId,
        result: "error",
        error: (error as Error).message,
        durationMs: performance.now() - startedAt,
      });
      throw new PermanentToolError(`[tool:${toolId}] ${(error as Error).message}`, {
        cause: error,
        hint:
          (error as KeelError).hint ??
          `Tool '${toolId}' failed its preflight check; fix its config or environment`,
        context: { toolId, agentId: agent.id, sessionId: request.sessionId, runId: request.runId },
      });
    }
  }
  done.add(request.sessionId);
}

/** A run that could not reach its loop (queue full, preflight failed, store down) still ends with a result. */
function failedBeforeLoop(input: ExecuteRequestInput, thrown: unknown): RunResult {
  const error = KeelError.isInstance(thrown)
    ? thrown
    : new KeelError((thrown as Error)?.message ?? String(thrown), { code: "error.unknown", cause: thrown });
  const { log, request, agent } = input;
  const result: RunResult = {
    runId: request.runId,
    finalOutput: null,
    stopReason: "failed",
    termination: { type: "error", value: error.message },
    pendingToolCalls: [],
    usage: createRunUsage(),
    artifacts: [],
    error: error.message,
    errorDetails: toErrorDetails(error),
    exception: error,
    metadata: { agentId: agent.id, sessionId: request.sessionId, steps: 0 },
  };
  if (log.lastSequence === 0) log.emit("run.started", { resumed: false });
  log.emit("run.failed", { error: result.error, errorDetails: result.errorDetails });
  log.emit("run.finished", { result });
  return result;
}
