import type { HookContext, ModelResponse, Phase, ToolCallState } from "../contracts/hook.js";
import type { ModelRequest } from "../contracts/language-model.js";
import type { RunContext } from "../contracts/tool.js";

/** The context object hooks receive; built only for phases that have hooks. */
export class PhaseContext implements HookContext {
  request?: ModelRequest;
  response?: ModelResponse;
  call?: ToolCallState;
  constructor(
    readonly phase: Phase,
    readonly run: RunContext,
    readonly step: number,
    private readonly driver: { stopRequested: string | null },
  ) {}
  requestStop(reason?: string): void {
    this.driver.stopRequested = reason ?? this.phase;
  }
}
