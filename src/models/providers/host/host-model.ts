import {
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStreamPart,
} from "../../../contracts/language-model.js";
import { ConfigError } from "../../../errors/error-classes.js";
import { currentHostBridge } from "./host-bridge.js";

/**
 * `llm.provider: "host"`: the model is whichever one the host grants the run, called through the host's API
 * proxy. Outside a host run there is no host to ask, and a call fails with a config error that says so.
 */
export class HostModel implements LanguageModel {
  readonly specificationVersion = MODEL_SPECIFICATION_VERSION;
  readonly provider = "host";
  readonly modelId: string;
  private readonly requestedModel: string | undefined;

  constructor(modelId?: string) {
    this.requestedModel = modelId;
    this.modelId = modelId ?? "host";
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const bridge = currentHostBridge();
    if (!bridge) {
      yield {
        type: "error",
        errorType: "unknown",
        error: new ConfigError('llm.provider "host" can only be called inside a host run', {
          hint: "Serve the agent with `keel runner` (or serveKeelRunner) and let a host run it, or choose another provider",
        }),
      };
      return;
    }
    yield* bridge.streamModel(request, this.requestedModel);
  }
}
