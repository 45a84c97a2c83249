import { z } from "zod";
import type { RunRecord, RunRequest, RunResult, SuspendedToolCall } from "../contracts/run-types.js";
import type { JsonSchema, Tool, ToolContext, ValidationOutcome } from "../contracts/tool.js";
import type { ToolDecision } from "../contracts/tool-decision.js";
import { ToolError } from "../errors/error-classes.js";
import { isTraceContextCarrier } from "../events/trace-context-carrier.js";
import type { PluginDefinition } from "../plugins/plugin-registry.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";
import { BaseTool } from "./base-tool.js";
import { SuspendToolCall } from "./suspend-tool-call.js";

/** What an agent tool needs of the runtime: run an agent, decide for it, look up its runs. */
export interface AgentRunner {
  runDetailed(request: RunRequest): Promise<RunResult>;
  decide(input: { runId: string; decisions: readonly ToolDecision[] }): Promise<RunResult>;
  getRun(runId: string): Promise<RunRecord | null>;
}

/** Options of {@link agentAsTool}. */
export interface AgentAsToolOptions {
  /** The tool's name for the model; default the agent's id. */
  name?: string;
  description?: string;
  /** The one string argument; default `task`. */
  argName?: string;
  argDescription?: string;
  /** Run the child in the parent's session, sharing its state (inside the parent's session scope). Default false. */
  propagateSession?: boolean;
}

/**
 * Another agent as a tool: one required string argument becomes the child run's input; the child runs
 * with the parent's `functionInvocationKwargs` and `parentRunId`, in a fresh session per call or — with
 * `propagateSession` — in the parent's own session, and the tool's result is its final text. When the parent
 * is traced, the child's trace continues under the call's `execute_tool` span. A child that
 * suspends suspends this call; the decision on this call is forwarded to the child (approve and deny reach
 * every call the child waits on; `value: { decisions }` passes the child's own decisions through).
 */
export class AgentTool extends BaseTool<Record<string, unknown>, string> {
  readonly name: string;
  readonly description: string;
  private readonly argName: string;
  private readonly argDescription: string;
  private readonly propagateSession: boolean;

  constructor(
    private readonly runner: AgentRunner,
    readonly agentId: string,
    options: AgentAsToolOptions = {},
  ) {
    super();
    this.name = options.name ?? agentId;
    this.description = options.description ?? `Ask the agent '${agentId}' to carry out a task`;
    this.argName = options.argName ?? "task";
    this.argDescription = options.argDescription ?? "What the agent should do, in plain words";
    this.propagateSession = options.propagateSession ?? false;
  }

  override schema(): JsonSchema {
    return {
      type: "object",
      properties: { [this.argName]: { type: "string", description: this.argDescription } },
      required: [this.argName],
      additionalProperties: false,
    };
  }

  validateParams(params: unknown): ValidationOutcome<Record<string, unknown>> {
    const value = (params as Record<string, unknown> | null)?.[this.argName];
    if (typeof value === "string" && value.trim() !== "")
      return { ok: true, value: { [this.argName]: value } };
    return { ok: false, error: `'${this.argName}' must be a non-empty string` };
  }

  async invoke(params: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    // One child run per call, named after it: a replayed call finds the child it started.
    const childRunId = `${ctx.runId}:${ctx.toolCallId}`;
    const decision = ctx.resumeInput as ToolDecision | undefined;
    const existing = decision === undefined ? null : await this.runner.getRun(childRunId);
    const result =
      existing?.status === "waiting"
        ? await this.runner.decide({
            runId: childRunId,
            decisions: forward(decision!, existing.pendingToolCalls),
          })
        : await this.runner.runDetailed(
            this.childRequest(params, ctx, existing === null ? childRunId : undefined),
          );
    if (result.stopReason === "suspended") {
      throw new SuspendToolCall({
        reason: `Agent '${this.agentId}' waits for a decision on ${result.pendingToolCalls
          .map((call) => `${call.toolId} (${call.toolCallId})`)
          .join(", ")}`,
        resumeMode: "replay_tool_call",
      });
    }
    if (result.stopReason !== "completed") {
      throw new ToolError(
        `Agent '${this.agentId}' ended ${result.stopReason}${result.error ? `: ${result.error}` : ""}`,
        {
          context: { agentId: this.agentId, runId: result.runId },
        },
      );
    }
    const output = result.finalOutput;
    return typeof output === "string" ? output : JSON.stringify(output);
  }

  private childRequest(
    params: Record<string, unknown>,
    ctx: ToolContext,
    runId: string | undefined,
  ): RunRequest {
    const request: RunRequest = {
      agentId: this.agentId,
      inputText: params[this.argName] as string,
      parentRunId: ctx.runId,
      functionInvocationKwargs: ctx.kwargs,
    };
    if (runId !== undefined) request.runId = runId;
    if (this.propagateSession) request.sessionId = ctx.sessionId;
    // A traced parent's child run hangs under this call's span, in the parent's trace, rather than starting a
    // trace of its own.
    const bus = ctx.eventBus;
    const traceContext = isTraceContextCarrier(bus)
      ? bus.traceContextOf(ctx.runId, ctx.toolCallId)
      : undefined;
    if (traceContext !== undefined) request.traceContext = traceContext;
    return request;
  }
}

/** The parent's decision as decisions for the child's waiting calls. */
function forward(decision: ToolDecision, pending: readonly SuspendedToolCall[]): ToolDecision[] {
  const inner = (decision.value as { decisions?: unknown } | undefined)?.decisions;
  if (Array.isArray(inner)) return inner as ToolDecision[];
  const action = decision.action === "deny" ? "deny" : "approve";
  return pending.map((call) => {
    const forwarded: ToolDecision = { toolCallId: call.toolCallId, action };
    if (decision.reason !== undefined) forwarded.reason = decision.reason;
    return forwarded;
  });
}

/** `runtime.agentAsTool(...)`'s implementation. */
export function agentAsTool(runner: AgentRunner, agentId: string, options: AgentAsToolOptions = {}): Tool {
  return new AgentTool(runner, agentId, options) as unknown as Tool;
}

const agentToolConfig = builtOnFirstUse(() =>
  z
    .object({
      agent_id: z.string().min(1),
      arg_name: z.string().min(1).optional(),
      arg_description: z.string().optional(),
      description: z.string().optional(),
      propagate_session: z.boolean().optional(),
    })
    .strict(),
);

/** The `agent` tool builtin: `{"id": "researcher", "type": "agent", "config": {"agent_id": "…"}}`. */
export const agentToolPlugin: PluginDefinition<Tool> = {
  kind: "tool",
  type: "agent",
  get configSchema() {
    return agentToolConfig();
  },
  create(config, context) {
    const parsed = agentToolConfig().parse(config);
    const options: AgentAsToolOptions = {};
    if (parsed.arg_name !== undefined) options.argName = parsed.arg_name;
    if (parsed.arg_description !== undefined) options.argDescription = parsed.arg_description;
    if (parsed.description !== undefined) options.description = parsed.description;
    if (parsed.propagate_session !== undefined) options.propagateSession = parsed.propagate_session;
    return agentAsTool(context.runtime as AgentRunner, parsed.agent_id, options);
  },
};
