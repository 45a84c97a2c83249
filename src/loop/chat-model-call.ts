import type { ModelResponse } from "../contracts/hook.js";
import type { RunContext } from "../contracts/tool.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { KeelError } from "../errors/keel-error.js";
import { MiddlewareTermination } from "../middleware/middleware-termination.js";
import { accumulateUsage } from "./accumulate-usage.js";
import type { CancelScope } from "./cancel-scope.js";
import { ChatCallContext } from "./chat-call-context.js";
import type { ModelCallRequest } from "./model-call-request.js";
import { type ModelStreamSink, readModelStream } from "./read-model-stream.js";
import type { ResolvedAgent } from "./resolved-agent.js";
import { TerminateRun } from "./run-signals.js";

/** What a model call through chat middleware needs of the run's driver. */
export interface ChatModelCaller extends ModelStreamSink {
  readonly agent: ResolvedAgent;
  readonly ctx: RunContext;
  readonly scope: CancelScope;
  readonly step: number;
  checkpointBoundary(): void;
  failModelCall(error: unknown): never;
}

/**
 * The model call through chat middleware: every call the model answers counts in usage, `llm.failed`
 * reports an error that leaves the chain, and a response the model never gave streams its text as one delta.
 */
export async function callThroughChatMiddleware(
  driver: ChatModelCaller,
  request: ModelCallRequest,
): Promise<ModelResponse> {
  const { model, pricing } = driver.agent;
  const context = new ChatCallContext(driver, request, model.modelId);
  let called = false;
  try {
    await driver.agent.middleware.chat.run(context, async () => {
      driver.checkpointBoundary();
      called = true;
      let response: ModelResponse;
      try {
        response = await readModelStream(model.stream(context.request), driver, {
          scope: driver.scope,
          fallbackModel: model.modelId,
        });
      } catch (error) {
        driver.ctx.usage.llmCalls++;
        if (driver.scope.cancelled) throw new TerminateRun(driver.scope.termination!);
        throw error;
      }
      accumulateUsage(driver.ctx.usage, response.usage, pricing);
      context.result = response;
    });
  } catch (thrown) {
    if (thrown instanceof TerminateRun) throw thrown;
    if (driver.scope.cancelled) throw new TerminateRun(driver.scope.termination!);
    if (!MiddlewareTermination.isInstance(thrown)) driver.failModelCall(thrown);
    if (thrown.hasResult) context.result = thrown.result as Partial<ModelResponse>;
  }
  const response = context.result;
  if (response === undefined) {
    driver.failModelCall(
      new KeelError("Chat middleware ended the model call without a result", {
        code: ERROR_CODES.MIDDLEWARE_NO_RESULT,
        hint: "Call next(), or set ctx.result to a response such as { text: '…' } before returning",
      }),
    );
  }
  if (!called && response.text !== "") driver.onTextDelta(response.text);
  return response;
}
