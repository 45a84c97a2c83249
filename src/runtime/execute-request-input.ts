import type { RunRequest } from "../contracts/run-types.js";
import type { EventBus } from "../contracts/runtime-event.js";
import type { RunEventLog } from "../events/run-event-log.js";
import type { CancelScope } from "../loop/cancel-scope.js";
import type { ToolDecision } from "../loop/decisions.js";
import type { ResolvedAgent } from "../loop/resolved-agent.js";
import type { PreparedResume } from "../loop/resume/index.js";
import type { RuntimePlugin } from "../loop/runtime-plugin.js";
import type { SessionManager } from "../sessions/session-manager.js";
import type { SkillsManager } from "../skills/skills-manager.js";

/** What one run needs from the runtime: its agent, request, log and scope, and the runtime's parts. */
export interface ExecuteRequestInput {
  agent: ResolvedAgent;
  request: RunRequest & { runId: string; sessionId: string };
  log: RunEventLog;
  scope: CancelScope;
  eventBus: EventBus;
  sessionManager: SessionManager;
  skills: SkillsManager;
  runtime: RuntimePlugin;
  /** The request resumes a checkpoint. */
  resume?: PreparedResume;
  /** Decisions for the suspended calls of the checkpoint it resumes. */
  decisions?: readonly ToolDecision[];
  /** Receives the session scope's token once the run holds it. */
  session?: { token?: symbol };
  /** Re-enter a scope of the session the caller holds (a child run sharing its parent's session). */
  reentrantToken?: symbol;
  /** The runtime made the session up for this run: the store may forget it sooner once idle. */
  generatedSession?: boolean;
  /**
   * Called once the run is over, just before its result settles: after its final record is stored, or as a
   * refused resume rejects. One call at the end rather than a `.finally` link, which a parked run would hold.
   */
  onEnd?: () => void;
}
