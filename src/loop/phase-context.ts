import type { HookContext, ModelResponse, Phase, ToolCallState } from "../contracts/hook.js";
import type { ModelRequest } from "../contracts/language-model.js";
import type { RunContext } from "../contracts/tool.js";

/** The context object hooks receive; built only for phases that have hooks. */
export class PhaseContext implements HookContext {
  request?: ModelRequest;
  response?: ModelResponse;
  call?: ToolCallState;
  readonly run: RunContext;
  readonly step: number;

  constructor(
    readonly phase: Phase,
    private readonly driver: {
      readonly ctx: RunContext;
      readonly step: number;
      stopRequested: string | null;
    },
  ) {
    this.run = driver.ctx;
    this.step = driver.step;
  }
  requestStop(reason?: string): void {
    this.driver.stopRequested = reason ?? this.phase;
  }
}
