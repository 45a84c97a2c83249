import { isDeepStrictEqual } from "node:util";
import type { FunctionMiddlewareContext } from "../contracts/middleware.js";
import type { BatchToolExecutor, ToolExecutionResult } from "../contracts/tool.js";
import { ToolError, ToolValidationError } from "../errors/error-classes.js";
import type { MiddlewareChain } from "../middleware/middleware-chain.js";
import { MiddlewareTermination } from "../middleware/middleware-termination.js";
import { ToolCallContext } from "./tool-call-context.js";

/**
 * A tool call's context in an agent with function middleware: the middleware and the tool get this same
 * object. Its arguments are writable, its kwargs are the call's own copy, and it carries the chain's result.
 */
export class FunctionInvocationContext extends ToolCallContext implements FunctionMiddlewareContext {
  result: unknown = undefined;
  /** A `MiddlewareTermination` ended the chain: the run ends once the step's results are recorded. */
  terminated = false;
  private ownKwargs: Record<string, unknown> | null = null;
  private validated: Record<string, unknown> | null = null;
  private validatedCopy: unknown = undefined;

  override get arguments(): Record<string, unknown> {
    return this.params;
  }
  override set arguments(value: Record<string, unknown>) {
    this.params = value;
  }

  override get kwargs(): Record<string, unknown> {
    if (this.ownKwargs === null) this.ownKwargs = { ...this.host.functionInvocationKwargs };
    return this.ownKwargs;
  }
  override set kwargs(value: Record<string, unknown>) {
    this.ownKwargs = value;
  }

  /** The arguments as the gate let them through: the ones later changes are compared with. */
  markValidated(): void {
    this.validated = this.params;
    this.validatedCopy = copyOf(this.params);
    this.metadata.callId = this.toolCallId;
  }

  /** Validate arguments middleware changed (replaced or edited in place) against the tool's schema. */
  async validateChanges(): Promise<void> {
    const params = this.params;
    if (params === this.validated && isDeepStrictEqual(params, this.validatedCopy)) return;
    if (this.tool.validateParams !== undefined) {
      const outcome = await this.tool.validateParams(params);
      if (!outcome.ok) {
        throw new ToolValidationError(`Invalid arguments for tool '${this.toolId}':\n${outcome.error}`, {
          context: { toolId: this.toolId },
          hint: "Function middleware changed the arguments into ones the tool's schema refuses",
        });
      }
      this.params = outcome.value as Record<string, unknown>;
    }
    this.markValidated();
  }
}

/** Deep enough to notice arguments edited in place; values `structuredClone` refuses are compared shallowly. */
function copyOf(params: Record<string, unknown>): unknown {
  try {
    return structuredClone(params);
  } catch {
    return { ...params };
  }
}

type Execute = (context: FunctionInvocationContext) => Promise<ToolExecutionResult>;

/**
 * One tool call through the function middleware around `execute` (the executor): the chain's outcome as an
 * execution result. A failed execution makes `next()` throw the tool's error; if it leaves the chain, the
 * executor's own result stands (its suspension, cancellation or timeout kept). A `MiddlewareTermination` records
 * its result (else `ctx.result`) as a success and marks the context `terminated`.
 */
export async function invokeThroughMiddleware(
  chain: MiddlewareChain<FunctionMiddlewareContext>,
  context: FunctionInvocationContext,
  execute: Execute,
): Promise<ToolExecutionResult> {
  const toolId = context.toolId;
  let succeeded: ToolExecutionResult | null = null;
  let failed: ToolExecutionResult | null = null;
  let thrownByCall: unknown;
  context.markValidated();
  try {
    await chain.run(context, async () => {
      await context.validateChanges();
      context.renewSignal();
      const result = await execute(context);
      if (result.success) {
        succeeded = result;
        context.result = result.data;
        return;
      }
      failed = result;
      thrownByCall = result.exception ?? new ToolError(result.error ?? `Tool '${toolId}' failed`);
      throw thrownByCall;
    });
  } catch (thrown) {
    if (MiddlewareTermination.isInstance(thrown)) {
      if (thrown.hasResult) context.result = thrown.result;
      context.terminated = true;
      return { toolId, success: true, data: context.result, metadata: {} };
    }
    if (failed !== null && thrown === thrownByCall) return failed;
    return { toolId, success: false, error: (thrown as Error)?.message, exception: thrown, metadata: {} };
  }
  return {
    toolId,
    success: true,
    data: context.result,
    metadata: (succeeded as ToolExecutionResult | null)?.metadata ?? {},
  };
}

/**
 * The calls of a parallel stage, each through its own middleware chain, executed together: the executor's batch
 * starts once every chain has reached its executor or finished without it, so its scheduling (which calls may
 * run together) still holds. A chain that calls `next()` again later runs that attempt on its own.
 */
export function invokeBatchThroughMiddleware(
  chain: MiddlewareChain<FunctionMiddlewareContext>,
  contexts: readonly FunctionInvocationContext[],
  executor: BatchToolExecutor,
): Promise<ToolExecutionResult[]> {
  const waiting: {
    context: FunctionInvocationContext;
    settle: (result: Promise<ToolExecutionResult>) => void;
  }[] = [];
  const arrived = new Array<boolean>(contexts.length).fill(false);
  let outstanding = contexts.length;
  const arrive = (index: number): void => {
    if (arrived[index]) return;
    arrived[index] = true;
    if (--outstanding > 0 || waiting.length === 0) return;
    const batch = executor.executeBatch(waiting.map((entry) => entry.context));
    waiting.forEach((entry, position) => {
      entry.settle(batch.then((results) => results[position]!));
    });
  };
  return Promise.all(
    contexts.map((context, index) =>
      invokeThroughMiddleware(chain, context, (current) => {
        if (arrived[index]) return executor.execute(current);
        const result = new Promise<ToolExecutionResult>((resolve) => {
          waiting.push({ context: current, settle: resolve });
        });
        arrive(index);
        return result;
      }).finally(() => arrive(index)),
    ),
  );
}
