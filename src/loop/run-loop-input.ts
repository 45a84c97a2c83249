import type { RunRequest, RunResult } from "../contracts/run-types.js";
import type { RunContext } from "../contracts/tool.js";
import type { RunEventLog } from "../events/run-event-log.js";
import type { EffectivePolicy } from "../permissions/effective-policy.js";
import type { RunFolder } from "../run-folders/run-folder.js";
import type { SessionManager } from "../sessions/session-manager.js";
import type { SessionSkillSummary } from "../skills/skills-manager.js";
import type { CancelScope } from "./cancel-scope.js";
import type { StoredMarks } from "./checkpoint-writer.js";
import type { ToolDecision } from "./decisions.js";
import type { ResolvedAgent } from "./resolved-agent.js";
import type { LoadedRunState } from "./resume/index.js";

// What goes into a run loop and what comes out, apart from the loop itself: the pieces the loop calls (agent
// middleware's context, the runtime plugin) take these types without importing the loop.

export interface RunLoopInput {
  agent: ResolvedAgent;
  /** With `runId` and `sessionId` filled in. */
  request: RunRequest & { runId: string; sessionId: string };
  log: RunEventLog;
  scope: CancelScope;
  sessionManager: SessionManager;
  sessionState: Record<string, unknown>;
  /** A checkpoint to continue from: the run is rebuilt from it rather than assembled. */
  resume?: LoadedRunState;
  /** What the store already holds of this run (a resumed run's checkpoints, messages and events). */
  stored?: StoredMarks;
  /** Decisions for the suspended calls of the checkpoint it resumes, checked already. */
  decisions?: readonly ToolDecision[];
  /** The run's effective permission policy; default the agent's. */
  policy?: EffectivePolicy;
  /** The session's skills, so the policy is recomputed when one loads during the run. */
  skillSummaries?: Readonly<Record<string, SessionSkillSummary>>;
  /** The run's folder, when the agent keeps run folders. */
  runFolder?: RunFolder;
  /**
   * Called with a suspended run's result before `run.finished`, while the run still holds its session: it
   * stores what a later decision needs, and may turn the result into a failure when that cannot be stored.
   */
  onSuspended?: (result: RunResult) => Promise<void>;
}

export interface RunLoopOutcome {
  result: RunResult;
  context: RunContext;
  /** Transcript messages the run added (to persist in the session). */
  newMessages: RunContext["transcript"];
  /** The last event sequence already in the store; the events after it are still to be stored. */
  storedSequence: number;
  /** Run transcript messages in the store, or null when the run stored none (nothing to bring up to date). */
  storedMessages: number | null;
}
