import type {
  ModelCallOptions,
  ModelOutputSchema,
  ModelRequest,
  ModelToolSpec,
} from "../contracts/language-model.js";
import type { Message, TextPart } from "../contracts/message.js";
import type { RunRequest } from "../contracts/run-types.js";
import type { CancelScope } from "./cancel-scope.js";
import type { ResolvedAgent } from "./resolved-agent.js";

/**
 * A model request whose AbortSignal is made only when the provider reads it: HTTP providers always do, the
 * mock models only when they wait, so a run on the mock never pays for an AbortController.
 */
export class ModelCallRequest implements ModelRequest {
  system?: string | TextPart[];
  tools?: readonly ModelToolSpec[];
  toolChoice?: ModelRequest["toolChoice"];
  outputSchema?: ModelOutputSchema;
  clientKwargs?: Record<string, unknown>;
  private explicitSignal: AbortSignal | undefined;

  constructor(
    public messages: readonly Message[],
    public options: ModelCallOptions,
    private readonly scope: CancelScope,
  ) {}

  get signal(): AbortSignal {
    return this.explicitSignal ?? this.scope.signal;
  }

  set signal(signal: AbortSignal) {
    this.explicitSignal = signal;
  }
}

/** What a model request is made from when a pattern does not say otherwise: the run's driver. */
export interface ModelRequestSource {
  readonly agent: Pick<ResolvedAgent, "modelOptions" | "toolSpecs">;
  readonly ctx: { readonly transcript: readonly Message[] };
  readonly scope: CancelScope;
  readonly request: Pick<RunRequest, "clientKwargs">;
  systemPrompt(): string | undefined;
  runOutputSchema(): ModelOutputSchema | undefined;
}

/** The request of one model call: the agent's, with what the pattern overrides. */
export function buildModelRequest(
  source: ModelRequestSource,
  overrides: Partial<ModelRequest>,
): ModelCallRequest {
  const agent = source.agent;
  const request = new ModelCallRequest(
    overrides.messages ?? source.ctx.transcript,
    overrides.options ?? agent.modelOptions,
    source.scope,
  );
  const system = overrides.system ?? source.systemPrompt();
  if (system !== undefined) request.system = system;
  const tools = overrides.tools ?? (agent.toolSpecs.length > 0 ? agent.toolSpecs : undefined);
  if (tools !== undefined) request.tools = tools;
  if (overrides.toolChoice !== undefined) request.toolChoice = overrides.toolChoice;
  // A run with an output type asks providers with a native structured mode for it; a pattern's own
  // call can ask for another schema, or for none by passing `outputSchema: undefined`.
  const outputSchema = "outputSchema" in overrides ? overrides.outputSchema : source.runOutputSchema();
  if (outputSchema !== undefined) request.outputSchema = outputSchema;
  const clientKwargs = source.request.clientKwargs;
  if (clientKwargs !== undefined) request.clientKwargs = clientKwargs;
  return request;
}
