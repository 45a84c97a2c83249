import { ToolError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import type { RunDriverView } from "./run-driver-view.js";
import { executeToolStage } from "./tool-stage.js";

/** What a pattern's own tool call needs of the run's driver, besides what the tool stage needs. */
export interface OutsideCaller extends RunDriverView {
  readonly step: number;
}

let toolCallCounter = 0;

/** One tool called by the pattern itself (no model turn): its data, or a `ToolError` when it failed. */
export async function callOneTool(
  driver: OutsideCaller,
  toolId: string,
  params: Record<string, unknown>,
): Promise<unknown> {
  const [state] = await executeToolStage(
    driver,
    [{ id: `call_${driver.ctx.runId}_${++toolCallCounter}`, name: toolId, arguments: params }],
    { appendResults: false },
  );
  if (state!.status === "succeeded") return state!.result;
  throw new ToolError(state!.error?.message ?? `Tool '${toolId}' failed`, {
    code: state!.error?.code ?? ERROR_CODES.TOOL_ERROR,
    context: { toolId, runId: driver.ctx.runId, step: driver.step },
  });
}

/** Several tools called by the pattern as one batch: results in input order, failures as errors in place. */
export async function callToolBatch(
  driver: OutsideCaller,
  calls: readonly (readonly [string, Record<string, unknown>])[],
): Promise<unknown[]> {
  const batchId = `batch_${++toolCallCounter}`;
  const toolCalls = calls.map(([name, params]) => ({
    id: `call_${driver.ctx.runId}_${++toolCallCounter}`,
    name,
    arguments: params,
  }));
  const startedAt = performance.now();
  driver.log.emit("tool.batch.started", {
    batchId,
    toolCallIds: toolCalls.map((call) => call.id),
    concurrentCount: toolCalls.length,
  });
  const states = await executeToolStage(driver, toolCalls, { appendResults: false });
  const successes = states.filter((state) => state.status === "succeeded").length;
  driver.log.emit("tool.batch.completed", {
    batchId,
    successes,
    failures: states.length - successes,
    durationMs: performance.now() - startedAt,
  });
  return states.map((state) =>
    state.status === "succeeded" ? state.result : new Error(state.error?.message ?? "failed"),
  );
}
