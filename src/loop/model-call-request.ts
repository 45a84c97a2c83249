import type {
  ModelCallOptions,
  ModelOutputSchema,
  ModelRequest,
  ModelToolSpec,
} from "../contracts/language-model.js";
import type { Message, TextPart } from "../contracts/message.js";
import type { CancelScope } from "./cancel-scope.js";

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
