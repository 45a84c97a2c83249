/**
 * What the console reads from the server. The wire types are the server's own: type-only imports, so nothing of
 * the server reaches the bundle, and a change there that the console does not follow fails its type check.
 */

export type {
  RunRecord,
  RunResult,
  RunStatus,
  RunUsage,
  SuspendedToolCall as SuspendedCall,
} from "../../src/contracts/run-types.js";
export type { ToolDecision as Decision } from "../../src/contracts/tool-decision.js";
export type { EffectivePolicy, PolicyRule } from "../../src/permissions/effective-policy.js";

export interface AgentSummary {
  id: string;
  name: string;
}

/** One chunk of a run's stream, as the server writes it in an SSE frame's `data:`. */
export interface Chunk {
  kind: string;
  sequence: number;
  timestampMs: number;
  runId: string;
  agentId: string;
  sessionId: string;
  payload: Record<string, unknown>;
}
