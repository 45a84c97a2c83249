import type { Message } from "../models/message.js";
import type { RunRequest, RunResult } from "../runtime/run-types.js";
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

/** The context-assembler seam: which earlier messages and artifacts a run starts with. */
export interface ContextAssembler {
  assemble(input: ContextAssemblyInput): ContextAssemblyResult | Promise<ContextAssemblyResult>;
  /** May replace the run's result (default: unchanged). */
  finalize?(input: ContextAssemblyInput, result: RunResult): RunResult | Promise<RunResult>;
}
