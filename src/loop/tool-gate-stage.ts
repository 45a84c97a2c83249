import { nearMatch } from "../config/near-match.js";
import type { ToolCallState, ToolGateDecision } from "../contracts/hook.js";
import type { ToolCall } from "../contracts/message.js";
import { isPolicyToolExecutor } from "../contracts/tool.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import type { ToolVerdict } from "../permissions/effective-policy.js";
import { isApproval } from "./decisions.js";
import { deniedMessage } from "./restore-prior-call.js";
// The stage sees the driver through its view: run-driver.ts imports the stage.
import type { RunDriverView as RunDriver } from "./run-driver-view.js";
import type { StagedCall } from "./staged-call.js";
import { fail } from "./tool-call-outcome.js";

/**
 * The checks before the gate: a known tool, parseable and valid arguments. A refusal fails only the call.
 * Synchronous unless the tool's validator is; most are, and the step then allocates no promise here.
 */
export function admit(driver: RunDriver, entry: StagedCall, call: ToolCall): boolean | Promise<boolean> {
  const { state, tool } = entry;
  if (tool === undefined) {
    const names = Object.keys(driver.agent.tools);
    const suggestion = nearMatch(call.name, names);
    const message =
      `Tool '${call.name}' is not available.` +
      (suggestion ? ` Did you mean '${suggestion}'?` : "") +
      ` Available tools: ${names.join(", ") || "none"}`;
    fail(driver, state, { code: ERROR_CODES.TOOL_NOT_FOUND, message });
    return true;
  }
  if (call.argumentsError !== undefined) {
    fail(driver, state, {
      code: ERROR_CODES.TOOL_VALIDATION,
      message: `Malformed arguments for tool '${call.name}': ${call.argumentsError}`,
    });
    return true;
  }
  if (tool.validateParams) {
    const outcome = tool.validateParams(state.params);
    if (outcome instanceof Promise) return outcome.then((settled) => applyValidation(driver, entry, settled));
    return applyValidation(driver, entry, outcome);
  }
  entry.context = driver.toolCallContext(state, tool, state.resumeInput);
  return false;
}

function applyValidation(
  driver: RunDriver,
  entry: StagedCall,
  outcome: { ok: true; value: unknown } | { ok: false; error: string },
): boolean {
  const { state } = entry;
  if (!outcome.ok) {
    fail(driver, state, {
      code: ERROR_CODES.TOOL_VALIDATION,
      message: `Invalid arguments for tool '${state.toolId}':\n${outcome.error}`,
    });
    return true;
  }
  state.params = outcome.value as Record<string, unknown>;
  entry.context = driver.toolCallContext(state, entry.tool!, state.resumeInput);
  return false;
}

/** The policy's verdict on a tool (own keys only: a tool id may be any string). */
export function verdictOf(driver: RunDriver, toolId: string): ToolVerdict | undefined {
  const tools = driver.policy!.tools;
  return Object.hasOwn(tools, toolId) ? tools[toolId] : undefined;
}

/**
 * A call the effective policy refuses: a `tool.permission_denied` result the model sees, naming the rule; the
 * run goes on. The call never started, so there is no `tool.started`.
 */
export function refuse(driver: RunDriver, state: ToolCallState, verdict: ToolVerdict): void {
  fail(driver, state, {
    code: ERROR_CODES.PERMISSION_DENIED,
    message: verdict.message ?? `Tool '${state.toolId}' is refused by rule ${verdict.rule}`,
    rule: verdict.rule,
  });
}

/** Whether the gate has anything to ask: hooks, an approval rule, or the executor's policy. */
export function needsGate(driver: RunDriver, entry: StagedCall, verdict: ToolVerdict | undefined): boolean {
  return (
    verdict?.effect === "ask" ||
    driver.agent.hooks.toolGate.length > 0 ||
    entry.context!.executionSpec.approvalMode === "always" ||
    entry.tool!.requiresApproval !== undefined ||
    isPolicyToolExecutor(driver.agent.toolExecutor)
  );
}

export function hasBeforeExecute(driver: RunDriver, entry: StagedCall): boolean {
  return driver.agent.hooks.beforeToolExecute.length > 0 || entry.tool!.beforeInvoke !== undefined;
}

export function hasAfterExecute(driver: RunDriver, entry: StagedCall): boolean {
  const tool = entry.tool!;
  return (
    driver.agent.hooks.afterToolExecute.length > 0 ||
    tool.afterInvoke !== undefined ||
    tool.fallback !== undefined
  );
}

/**
 * Gate hooks first (the first non-allow wins), then approval, then the executor's policy. A policy denial is
 * a refusal, not a block: it fails only this call and the run goes on ("refused").
 */
export async function gate(
  driver: RunDriver,
  entry: StagedCall,
  policyVerdict: ToolVerdict | undefined,
): Promise<ToolGateDecision | "refused" | undefined> {
  const verdict = await askGate(driver, entry, policyVerdict);
  if (verdict === "refused" || verdict?.action !== "suspend") return verdict;
  // A decision that sticks for this tool answers the suspension at once (`always`).
  const { state } = entry;
  const sticky = driver.stickyDecision(state.toolId);
  if (sticky === undefined) return verdict;
  if (sticky === "deny") {
    fail(driver, state, {
      code: ERROR_CODES.TOOL_DENIED,
      message: deniedMessage(`calls of '${state.toolId}' are always denied`),
      status: "cancelled",
    });
    return "refused";
  }
  state.resumeInput = { toolCallId: state.id, action: "approve", reason: "always approved" };
  entry.context = driver.toolCallContext(state, entry.tool!, state.resumeInput);
  return undefined;
}

async function askGate(
  driver: RunDriver,
  entry: StagedCall,
  policyVerdict: ToolVerdict | undefined,
): Promise<ToolGateDecision | "refused" | undefined> {
  const { state } = entry;
  const tool = entry.tool!;
  const context = entry.context!;
  // A destructive call the config enabled still waits for an approval (merge rule 5); no hook answers for it.
  // A tool's own approvalMode is asked for below, after the gate hooks, as it always was.
  if (policyVerdict?.effect === "ask" && policyVerdict.source !== "tool" && !isApproval(state.resumeInput))
    return {
      action: "suspend",
      reason: policyVerdict.message ?? `Tool '${state.toolId}' requires approval`,
      resumeMode: "replay_tool_call",
    };
  if (driver.agent.hooks.toolGate.length > 0) {
    const decision = await driver.agent.hooks.gate(driver.hookContext("toolGate", state), state);
    if (decision !== undefined) return decision;
  }
  const spec = context.executionSpec;
  // An approved call replays through the gate without asking again.
  const needsApproval =
    !isApproval(state.resumeInput) &&
    (spec.approvalMode === "always" ||
      (tool.requiresApproval !== undefined && (await tool.requiresApproval(state.params, context))));
  if (needsApproval)
    return {
      action: "suspend",
      reason: `Tool '${state.toolId}' requires approval`,
      resumeMode: "replay_tool_call",
    };
  const executor = driver.agent.toolExecutor;
  if (isPolicyToolExecutor(executor)) {
    const policy = await executor.evaluatePolicy(context);
    if (!policy.allowed) {
      fail(driver, state, {
        code: ERROR_CODES.PERMISSION_DENIED,
        message: `Policy denied tool '${state.toolId}': ${policy.reason}`,
      });
      return "refused";
    }
  }
  return undefined;
}

export async function beforeExecute(driver: RunDriver, entry: StagedCall): Promise<void> {
  if (driver.agent.hooks.beforeToolExecute.length > 0) {
    await driver.agent.hooks.run("beforeToolExecute", driver.hookContext("beforeToolExecute", entry.state));
  }
  await entry.tool!.beforeInvoke?.(entry.state.params, entry.context!);
}
