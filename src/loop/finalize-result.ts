import type { ContextAssemblyInput } from "../context/context-assembler.js";
import type { RunResult } from "../contracts/run-types.js";
import type { RunContext } from "../contracts/tool.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { KeelError, toErrorDetails } from "../errors/keel-error.js";
import type { RunAttempt } from "./agent-call-context.js";
import type { RunLoopInput } from "./run-loop-input.js";

/**
 * The context assembler's last word on a run that ended, after agent middleware and before `run.finished`: it may
 * post-process the result (returning nothing keeps it). A suspended run has not ended; it is finalized when it
 * does. A `finalize` that throws fails the run with its error.
 */
export async function finalizeResult(input: RunLoopInput, attempt: RunAttempt): Promise<RunResult> {
  const { result, context } = attempt;
  const assembler = input.agent.contextAssembler;
  if (assembler.finalize === undefined || result.stopReason === "suspended") return result;
  try {
    return (await assembler.finalize(assemblyInput(input, context), result)) ?? result;
  } catch (thrown) {
    const error = KeelError.isInstance(thrown)
      ? thrown
      : new KeelError(`The context assembler's finalize failed: ${(thrown as Error)?.message ?? thrown}`, {
          code: ERROR_CODES.CONTEXT_FINALIZE,
          cause: thrown,
          hint: "Fix the agent's context_assembler.finalize, or return the result it was given",
          context: {
            agentId: input.agent.id,
            sessionId: result.metadata.sessionId as string,
            runId: result.runId,
          },
        });
    return {
      ...result,
      finalOutput: null,
      stopReason: "failed",
      termination: { type: "error", value: error.message },
      error: error.message,
      errorDetails: toErrorDetails(error),
      exception: error,
    };
  }
}

/** What `assemble` and `finalize` are given: the run's request and session. */
export function assemblyInput(input: RunLoopInput, ctx: RunContext): ContextAssemblyInput {
  const { agent } = input;
  return {
    request: ctx.runRequest,
    sessionId: ctx.sessionId,
    sessionState: input.sessionState,
    sessionManager: input.sessionManager,
    countTokens: (text) => agent.model.countTokens?.(text) ?? Math.ceil(text.length / 4),
  };
}
