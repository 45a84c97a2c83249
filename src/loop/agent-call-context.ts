import type { Message } from "../contracts/message.js";
import type { AgentMiddlewareContext, MiddlewareSession } from "../contracts/middleware.js";
import type { RunRequest, RunResult, RunUsage } from "../contracts/run-types.js";
import type { RunContext } from "../contracts/tool.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { KeelError, toErrorDetails } from "../errors/keel-error.js";
import { MiddlewareTermination } from "../middleware/middleware-termination.js";
import { createRunContext } from "./create-run-context.js";
import type { RunLoopInput } from "./run-loop-input.js";
import { stopReasonOf } from "./termination.js";

/** What one pass of the run body leaves: its result, its context and the transcript messages it added. */
export interface RunAttempt {
  result: RunResult;
  context: RunContext;
  newMessages: Message[];
}

/** The run from RunStart to RunEnd for a request; never rejects for anything a run can end with. */
export type RunBody = (request: RunLoopInput["request"]) => Promise<RunAttempt>;

/**
 * The context agent middleware gets for one run. `request` is the run's own copy; each `next()` runs the
 * body with it as it is then, so a retry starts the run over (same run id, event log and usage totals).
 */
class AgentCallContext implements AgentMiddlewareContext {
  readonly request: RunLoopInput["request"];
  readonly metadata: Record<string, unknown> = {};
  /** The result of the latest pass of the body, if any ran. */
  attempt: RunAttempt | null = null;
  private value: RunResult | undefined = undefined;

  constructor(
    private readonly loop: RunLoopInput,
    private readonly usage: RunUsage,
  ) {
    const request = { ...loop.request };
    // The run's own buckets: what middleware puts in them stays out of the caller's request.
    if (request.functionInvocationKwargs !== undefined)
      request.functionInvocationKwargs = { ...request.functionInvocationKwargs };
    if (request.clientKwargs !== undefined) request.clientKwargs = { ...request.clientKwargs };
    this.request = request;
  }

  get agentId(): string {
    return this.loop.agent.id;
  }
  get runId(): string {
    return this.loop.request.runId;
  }
  get sessionId(): string {
    return this.loop.request.sessionId;
  }
  get resumed(): boolean {
    return this.loop.resume !== undefined;
  }
  get session(): MiddlewareSession {
    return { id: this.loop.request.sessionId, state: this.loop.sessionState };
  }
  get input(): string {
    return this.request.inputText;
  }
  set input(value: string) {
    this.request.inputText = value;
  }
  get functionInvocationKwargs(): Record<string, unknown> {
    this.request.functionInvocationKwargs ??= {};
    return this.request.functionInvocationKwargs;
  }
  set functionInvocationKwargs(value: Record<string, unknown>) {
    this.request.functionInvocationKwargs = value;
  }
  get clientKwargs(): Record<string, unknown> {
    this.request.clientKwargs ??= {};
    return this.request.clientKwargs;
  }
  set clientKwargs(value: Record<string, unknown>) {
    this.request.clientKwargs = value;
  }

  get result(): RunResult | undefined {
    return this.value;
  }
  set result(value: Partial<RunResult> | undefined) {
    this.value = value === undefined ? undefined : this.complete(value);
  }

  /** The request a pass of the body runs with: the middleware's copy, with the run's own ids. */
  requestForBody(): RunLoopInput["request"] {
    const { runId, sessionId, agentId } = this.loop.request;
    return { ...this.request, runId, sessionId, agentId };
  }

  /** A result given in part, completed with the run's ids, usage and artifacts. */
  private complete(value: Partial<RunResult>): RunResult {
    const termination = value.termination ?? { type: "behavior_requested", value: "middleware" };
    const stopReason = value.stopReason ?? stopReasonOf(termination);
    const result: RunResult = {
      ...value,
      runId: this.runId,
      finalOutput: value.finalOutput ?? null,
      stopReason,
      termination,
      pendingToolCalls: value.pendingToolCalls ?? [],
      usage: value.usage ?? this.usage,
      artifacts: value.artifacts ?? this.attempt?.result.artifacts ?? [],
      metadata: value.metadata ?? {
        agentId: this.agentId,
        sessionId: this.sessionId,
        steps: this.attempt?.result.metadata.steps ?? 0,
      },
    };
    return result;
  }
}

/**
 * The run body through the agent's middleware: the chain's `ctx.result` is the run's result. A
 * `MiddlewareTermination` returns `ctx.result` (its own result when it has one); any other error fails the run.
 */
export async function runWithAgentMiddleware(
  input: RunLoopInput,
  usage: RunUsage,
  body: RunBody,
): Promise<RunAttempt> {
  const context = new AgentCallContext(input, usage);
  let failure: KeelError | undefined;
  try {
    await input.agent.middleware.agent.run(context, async () => {
      const attempt = await body(context.requestForBody());
      context.attempt = attempt;
      context.result = attempt.result;
    });
  } catch (thrown) {
    if (MiddlewareTermination.isInstance(thrown)) {
      if (thrown.hasResult) context.result = thrown.result as Partial<RunResult>;
    } else {
      failure = KeelError.isInstance(thrown)
        ? thrown
        : new KeelError(thrown instanceof Error ? thrown.message : String(thrown), {
            code: ERROR_CODES.UNKNOWN,
            cause: thrown,
            hint: "Agent middleware threw; the run fails with its error",
          });
    }
  }
  if (failure !== undefined) {
    context.result = {
      finalOutput: null,
      termination: { type: "error", value: failure.message },
      error: failure.message,
      errorDetails: toErrorDetails(failure),
      exception: failure,
    };
  } else if (context.result === undefined) {
    context.result = {};
  }
  const attempt = context.attempt;
  return {
    result: context.result!,
    context: attempt?.context ?? emptyContext(input, usage),
    newMessages: attempt?.newMessages ?? [],
  };
}

/** The context of a run whose body middleware skipped. */
function emptyContext(input: RunLoopInput, usage: RunUsage): RunContext {
  const { agent, request } = input;
  const runRequest: RunRequest = { ...request };
  delete runRequest.functionInvocationKwargs;
  delete runRequest.clientKwargs;
  return createRunContext({
    agentId: agent.id,
    sessionId: request.sessionId,
    runId: request.runId,
    request: runRequest,
    state: input.sessionState,
    tools: agent.tools,
    model: agent.model,
    modelOptions: agent.modelOptions,
    log: input.log,
    toolExecutor: agent.toolExecutor,
    usage,
  });
}
