import type { ModelResponse, Phase } from "../contracts/hook.js";
import type { ModelRequest } from "../contracts/language-model.js";
import type { RunRequest } from "../contracts/run-types.js";
import { type ChatModelCaller, callThroughChatMiddleware } from "./chat-model-call.js";
import { buildModelRequest, type ModelRequestSource } from "./model-call-request.js";
import type { PhaseContext } from "./phase-context.js";
import { type ModelCallEnd, readModelStream } from "./read-model-stream.js";
import type { CheckpointPhase } from "./run-state.js";
import { type SteeredRun, takeSteering } from "./take-steering.js";

/** What a model call that goes through the phases needs of the run's driver. */
export type PhasedModelCaller = ChatModelCaller &
  ModelRequestSource &
  ModelCallEnd &
  SteeredRun & {
    readonly owesCheckpoint: boolean;
    readonly request: Pick<RunRequest, "clientKwargs" | "steering">;
    readonly fallbackModel: string;
    checkpoint(phase: CheckpointPhase): Promise<unknown>;
    hookContext(phase: Phase): PhaseContext;
    modelCalled(request: ModelRequest): number;
    modelStreamed(response: ModelResponse): ModelResponse;
    modelCallEnded(response: ModelResponse, startedAt: number): ModelResponse;
  };

/**
 * A model call with something to wait on around the model: an owed checkpoint first, steering messages,
 * BeforeInference and AfterInference hooks, chat middleware. The driver's `callLlm` takes the shorter way when
 * there is none.
 */
export async function callModelThroughPhases(
  driver: PhasedModelCaller,
  overrides: Partial<ModelRequest>,
): Promise<ModelResponse> {
  driver.checkpointBoundary();
  if (driver.owesCheckpoint) await driver.checkpoint("tools");
  if (driver.request.steering) await takeSteering(driver, driver.request.steering);
  const request = buildModelRequest(driver, overrides);
  const hooks = driver.agent.hooks;
  if (hooks.beforeInference.length > 0) {
    const context = driver.hookContext("beforeInference");
    context.request = request;
    await hooks.run("beforeInference", context);
    driver.checkpointBoundary();
  }
  const startedAt = driver.modelCalled(request);
  let response: ModelResponse;
  if (driver.agent.middleware.chat.length > 0) {
    response = await callThroughChatMiddleware(driver, request);
  } else {
    try {
      response = await readModelStream(driver.agent.model.stream(request), driver, driver);
    } catch (error) {
      driver.modelFailed(error);
    }
  }
  driver.modelStreamed(response);
  if (hooks.afterInference.length > 0) {
    const context = driver.hookContext("afterInference");
    context.request = request;
    context.response = response;
    await hooks.run("afterInference", context);
  }
  return driver.modelCallEnded(response, startedAt);
}
