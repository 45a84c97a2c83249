import type { EventBus } from "../events/runtime-event.js";
import type { LanguageModel, ModelCallOptions } from "../models/language-model.js";
import type { Message } from "../models/message.js";
import type { RunArtifact, RunRequest, RunUsage } from "../runtime/run-types.js";
import type { SessionArtifact } from "../sessions/session-manager.js";
import type { Tool } from "../tools/tool.js";
import type { ToolExecutor } from "../tools/tool-executor.js";
import type { RunContext, ToolResultRecord } from "./run-context.js";

class RunContextRecord implements RunContext {
  memoryView: Record<string, unknown> = {};
  readonly toolResults: ToolResultRecord[] = [];
  readonly scratch: Record<string, unknown> = {};
  readonly systemPromptFragments: string[] = [];
  readonly transcript: Message[] = [];
  sessionArtifacts: SessionArtifact[] = [];
  assemblyMetadata: Record<string, unknown> = {};
  readonly artifacts: RunArtifact[] = [];

  constructor(
    readonly agentId: string,
    readonly sessionId: string,
    readonly runId: string,
    readonly inputText: string,
    readonly deps: unknown,
    public state: Record<string, unknown>,
    readonly tools: Readonly<Record<string, Tool>>,
    readonly llmClient: LanguageModel,
    readonly llmOptions: ModelCallOptions,
    readonly eventBus: EventBus,
    readonly runRequest: RunRequest,
    readonly toolExecutor: ToolExecutor,
    readonly usage: RunUsage,
  ) {}
}

export interface RunContextInput {
  agentId: string;
  sessionId: string;
  runId: string;
  request: RunRequest;
  state: Record<string, unknown>;
  tools: Readonly<Record<string, Tool>>;
  model: LanguageModel;
  modelOptions: ModelCallOptions;
  eventBus: EventBus;
  toolExecutor: ToolExecutor;
  usage: RunUsage;
}

/** A run's context (RT-11); one object per run with a fixed shape. */
export function createRunContext(input: RunContextInput): RunContext {
  return new RunContextRecord(
    input.agentId,
    input.sessionId,
    input.runId,
    input.request.inputText,
    input.request.deps,
    input.state,
    input.tools,
    input.model,
    input.modelOptions,
    input.eventBus,
    input.request,
    input.toolExecutor,
    input.usage,
  );
}
