import type { ModelResponse } from "../contracts/hook.js";
import type { ModelCallOptions, ModelRequest, ModelToolSpec } from "../contracts/language-model.js";
import type { Message } from "../contracts/message.js";
import type { ChatMiddlewareContext, MiddlewareSession } from "../contracts/middleware.js";
import type { RunContext } from "../contracts/tool.js";

/**
 * The context chat middleware gets for one model call. The request is the one the model receives; its
 * `clientKwargs` are this call's own copy, so what chat middleware puts there reaches this call only.
 */
export class ChatCallContext implements ChatMiddlewareContext {
  readonly metadata: Record<string, unknown> = {};
  private response: ModelResponse | undefined = undefined;

  private readonly run: RunContext;
  readonly step: number;

  constructor(
    call: { readonly ctx: RunContext; readonly step: number },
    readonly request: ModelRequest,
    private readonly modelId: string,
  ) {
    this.run = call.ctx;
    this.step = call.step;
    if (request.clientKwargs !== undefined) request.clientKwargs = { ...request.clientKwargs };
  }

  get agentId(): string {
    return this.run.agentId;
  }
  get runId(): string {
    return this.run.runId;
  }
  get sessionId(): string {
    return this.run.sessionId;
  }
  get session(): MiddlewareSession {
    return { id: this.run.sessionId, state: this.run.state };
  }

  get messages(): readonly Message[] {
    return this.request.messages;
  }
  set messages(value: readonly Message[]) {
    this.request.messages = value;
  }
  get tools(): readonly ModelToolSpec[] | undefined {
    return this.request.tools;
  }
  set tools(value: readonly ModelToolSpec[] | undefined) {
    if (value === undefined) delete this.request.tools;
    else this.request.tools = value;
  }
  get options(): ModelCallOptions {
    return this.request.options;
  }
  set options(value: ModelCallOptions) {
    this.request.options = value;
  }
  get kwargs(): Record<string, unknown> {
    this.request.clientKwargs ??= {};
    return this.request.clientKwargs;
  }
  set kwargs(value: Record<string, unknown>) {
    this.request.clientKwargs = value;
  }

  get result(): ModelResponse | undefined {
    return this.response;
  }
  set result(value: Partial<ModelResponse> | undefined) {
    this.response = value === undefined ? undefined : completeResponse(value, this.modelId);
  }
}

/** A response middleware gave in part: no text, no tool calls, the stop reason they imply, the agent's model. */
function completeResponse(value: Partial<ModelResponse>, modelId: string): ModelResponse {
  const toolCalls = value.toolCalls ?? [];
  return {
    text: value.text ?? "",
    toolCalls,
    reasoning: value.reasoning ?? [],
    usage: value.usage,
    stopReason: value.stopReason ?? (toolCalls.length > 0 ? "tool_use" : "end_turn"),
    model: value.model ?? modelId,
  };
}
