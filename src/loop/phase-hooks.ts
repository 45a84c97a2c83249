import type { Hook, HookContext, Phase, ToolCallState, ToolGateDecision } from "../contracts/hook.js";

type PhaseHandler = (ctx: HookContext) => void | Promise<void>;
type GateHandler = (
  ctx: HookContext,
  call: ToolCallState,
) => ToolGateDecision | undefined | Promise<ToolGateDecision | undefined>;

/**
 * An agent's hooks sorted by phase once, when the agent is loaded, so a phase without hooks costs one length
 * check per step and no context object.
 */
export class PhaseHooks {
  readonly runStart: PhaseHandler[] = [];
  readonly stepStart: PhaseHandler[] = [];
  readonly beforeInference: PhaseHandler[] = [];
  readonly afterInference: PhaseHandler[] = [];
  readonly toolGate: GateHandler[] = [];
  readonly beforeToolExecute: PhaseHandler[] = [];
  readonly afterToolExecute: PhaseHandler[] = [];
  readonly stepEnd: PhaseHandler[] = [];
  readonly runEnd: PhaseHandler[] = [];

  constructor(hooks: readonly Hook[] = []) {
    for (const hook of hooks) {
      if (hook.runStart) this.runStart.push(hook.runStart.bind(hook));
      if (hook.stepStart) this.stepStart.push(hook.stepStart.bind(hook));
      if (hook.beforeInference) this.beforeInference.push(hook.beforeInference.bind(hook));
      if (hook.afterInference) this.afterInference.push(hook.afterInference.bind(hook));
      if (hook.toolGate) this.toolGate.push(hook.toolGate.bind(hook));
      if (hook.beforeToolExecute) this.beforeToolExecute.push(hook.beforeToolExecute.bind(hook));
      if (hook.afterToolExecute) this.afterToolExecute.push(hook.afterToolExecute.bind(hook));
      if (hook.stepEnd) this.stepEnd.push(hook.stepEnd.bind(hook));
      if (hook.runEnd) this.runEnd.push(hook.runEnd.bind(hook));
    }
  }

  /** Run a phase's hooks in registration order. */
  async run(phase: Exclude<Phase, "toolGate">, ctx: HookContext): Promise<void> {
    for (const handler of this[phase]) await handler(ctx);
  }

  /** The first gate decision other than allow wins; no decision means allow. */
  async gate(ctx: HookContext, call: ToolCallState): Promise<ToolGateDecision | undefined> {
    for (const handler of this.toolGate) {
      const decision = await handler(ctx, call);
      if (decision !== undefined && decision.action !== "allow") return decision;
    }
    return undefined;
  }
}
