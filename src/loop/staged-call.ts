import type { ToolCallState } from "../contracts/hook.js";
import type { Tool } from "../contracts/tool.js";
import type { ToolCallContext } from "./tool-call-context.js";

/** The result of a call that a block, a suspension or a limit earlier in its step kept from running. */
export const INTERRUPTED = "[Tool execution was interrupted]";

/** The result of a call a hook's stop, asked for before the tool stage, kept from running. */
export const NOT_EXECUTED = "[not executed: run stopped]";

/** One call of a step as the tool stage carries it: its state, its tool (unknown names have none) and context. */
export interface StagedCall {
  state: ToolCallState;
  tool: Tool | undefined;
  context: ToolCallContext | undefined;
  /** When the call started (`performance.now()`), once it has. */
  startedAt?: number;
  /** How long its execution took, once it ended. */
  durationMs?: number;
}
