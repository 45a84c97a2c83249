import type { Message } from "../contracts/message.js";
import type { RunRequest, RunResult } from "../contracts/run-types.js";
import type { SessionArtifact, SessionManager } from "../sessions/session-manager.js";

export interface ContextAssemblyResult {
  transcript: Message[];
  sessionArtifacts: SessionArtifact[];
  metadata: Record<string, unknown>;
}

export interface ContextAssemblyInput {
  request: RunRequest;
  sessionId: string;
  sessionState: Record<string, unknown>;
  sessionManager: SessionManager;
  /** Approximate token counter of the agent's model. */
  countTokens: (text: string) => number;
}

/**
 * The context-assembler seam: which earlier messages and artifacts a run starts with, and the last word on its
 * result. Both methods take the run's request and session in one options object, rather than as positional
 * `(request, sessionState, sessionManager)`, so the session id and a token counter fit beside them.
 */
export interface ContextAssembler {
  assemble(input: ContextAssemblyInput): ContextAssemblyResult | Promise<ContextAssemblyResult>;
  /**
   * Called once when the run ends, whatever its stop reason (a suspended run has not ended: it is called when the
   * run does), before `run.finished`: the result it returns is the run's. Returning nothing keeps the result; a
   * throw fails the run with that error.
   */
  finalize?(
    input: ContextAssemblyInput,
    result: RunResult,
  ): RunResult | undefined | Promise<RunResult | undefined>;
}
