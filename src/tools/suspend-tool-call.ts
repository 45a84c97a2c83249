import type { ResumeMode } from "../contracts/run-types.js";

/**
 * Thrown by a tool to suspend its own call until a decision arrives (for example a tool that needs a person
 * to pick an option). The call is replayed with `ctx.resumeInput` set when the decision comes.
 */
export class SuspendToolCall {
  readonly reason: string | undefined;
  readonly resumeMode: ResumeMode;
  readonly responseSchema: Record<string, unknown> | undefined;

  constructor(
    options: { reason?: string; resumeMode?: ResumeMode; responseSchema?: Record<string, unknown> } = {},
  ) {
    this.reason = options.reason;
    this.resumeMode = options.resumeMode ?? "use_decision_as_tool_result";
    this.responseSchema = options.responseSchema;
  }
}

export function isSuspendToolCall(value: unknown): value is SuspendToolCall {
  return value instanceof SuspendToolCall;
}
