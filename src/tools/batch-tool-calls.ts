import {
  type BatchItem,
  type BatchResult,
  type BatchTool,
  type BatchToolExecutor,
  isBatchTool,
  isBatchToolExecutor,
  isToolResult,
  type Tool,
  type ToolExecutionRequest,
  type ToolExecutionResult,
  type ToolExecutor,
} from "../contracts/tool.js";
import { ToolError } from "../errors/error-classes.js";
import { BaseTool } from "./base-tool.js";
import { executeToolCall } from "./execute-tool-call.js";
import { asToolError } from "./executors/safe-tool-executor.js";
import { isSuspendToolCall } from "./suspend-tool-call.js";

/**
 * Whether a tool batches natively: it has `invokeBatch` of its own. `BaseTool`'s default only loops `invoke`,
 * so its calls run one by one as any tool's do, each with its own timeout, retries and stream.
 */
export function batchesNatively(tool: Tool | undefined): tool is BatchTool {
  return tool !== undefined && isBatchTool(tool) && tool.invokeBatch !== BaseTool.prototype.invokeBatch;
}

/** The calls of a stage that share one `invokeBatch`: keyed by each group's first call. */
export interface BatchGroups<T> {
  /** Each group's first call → every call of the group, in stage order. */
  readonly groups: ReadonlyMap<T, readonly T[]>;
  /** Every call that is in a group. */
  readonly members: ReadonlySet<T>;
}

/**
 * Group the calls of one stage by tool: the calls of a native batch tool that has at least two of them form a
 * group that runs where its first call is. `undefined` when there is nothing to group (the usual stage).
 */
export function groupBatchCalls<T>(
  entries: readonly T[],
  describe: (entry: T) => { toolId: string; tool: Tool | undefined },
): BatchGroups<T> | undefined {
  let byTool: Map<string, T[]> | undefined;
  for (const entry of entries) {
    const { toolId, tool } = describe(entry);
    if (!batchesNatively(tool)) continue;
    byTool ??= new Map();
    const calls = byTool.get(toolId);
    if (calls === undefined) byTool.set(toolId, [entry]);
    else calls.push(entry);
  }
  if (byTool === undefined) return undefined;
  const groups = new Map<T, readonly T[]>();
  const members = new Set<T>();
  for (const calls of byTool.values()) {
    if (calls.length < 2) continue;
    groups.set(calls[0]!, calls);
    for (const call of calls) members.add(call);
  }
  return groups.size === 0 ? undefined : { groups, members };
}

/**
 * The executor a stage with batch groups runs through: the requests of one native batch tool, executed together,
 * become ONE `invokeBatch` sent through the inner executor as a single request (so its timeout, cancellation and
 * retries cover the batch), and each call gets its own result back by `itemId`. Every other request goes to the
 * inner executor as before (its own batch when it has one).
 */
export class BatchToolCalls implements BatchToolExecutor {
  constructor(readonly inner: ToolExecutor) {}

  execute(request: ToolExecutionRequest): Promise<ToolExecutionResult> {
    return executeToolCall(this.inner, request);
  }

  async executeBatch(requests: ToolExecutionRequest[]): Promise<ToolExecutionResult[]> {
    const results = new Array<ToolExecutionResult>(requests.length);
    const grouped = groupBatchCalls(requests, (request) => request);
    const rest: number[] = [];
    requests.forEach((request, index) => {
      if (grouped?.members.has(request) !== true) rest.push(index);
    });
    if (rest.length > 0) {
      const own = rest.map((index) => requests[index]!);
      const settled = isBatchToolExecutor(this.inner)
        ? await this.inner.executeBatch(own)
        : await inTurn(this.inner, own);
      rest.forEach((index, position) => {
        results[index] = settled[position]!;
      });
    }
    for (const group of grouped?.groups.values() ?? []) {
      const settled = await invokeBatchOnce(this.inner, group);
      group.forEach((request, position) => {
        results[requests.indexOf(request)] = settled[position]!;
      });
    }
    return results;
  }
}

async function inTurn(
  executor: ToolExecutor,
  requests: ToolExecutionRequest[],
): Promise<ToolExecutionResult[]> {
  const results: ToolExecutionResult[] = [];
  for (const request of requests) results.push(await executeToolCall(executor, request));
  return results;
}

/** One `invokeBatch` for the calls of one tool, each call's item id its tool call id, in the calls' order. */
async function invokeBatchOnce(
  executor: ToolExecutor,
  requests: readonly ToolExecutionRequest[],
): Promise<ToolExecutionResult[]> {
  const items: BatchItem[] = requests.map((request) => ({
    itemId: request.context.toolCallId,
    params: request.params,
  }));
  const outcome = await executor.execute(batchRequest(requests, items));
  const byItem = new Map<string, BatchResult>();
  if (outcome.success && Array.isArray(outcome.data)) {
    for (const result of outcome.data as BatchResult[]) byItem.set(result?.itemId, result);
  }
  const metadata = { ...outcome.metadata, batchSize: requests.length };
  return requests.map((request, index) => {
    if (!outcome.success) return { ...outcome, toolId: request.toolId, metadata };
    return resultOf(request, byItem.get(items[index]!.itemId), metadata);
  });
}

/**
 * The batch as one request for the inner executor: the first call's context (its signal is the batch's), a tool
 * whose `invoke` is the batch, `params` `{items}`; a timeout's abort reaches every call's signal.
 */
function batchRequest(requests: readonly ToolExecutionRequest[], items: BatchItem[]): ToolExecutionRequest {
  const first = requests[0]!;
  const tool = first.tool as BatchTool;
  const batch: Tool = {
    name: tool.name,
    description: tool.description,
    schema: () => tool.schema(),
    executionSpec: () => first.executionSpec,
    invoke: () => tool.invokeBatch(items, first.context),
  };
  return {
    toolId: first.toolId,
    tool: batch,
    params: { items },
    context: first.context,
    executionSpec: first.executionSpec,
    metadata: first.metadata,
    get signal() {
      return first.signal;
    },
    get cancelled() {
      return first.cancelled;
    },
    abort(reason: unknown) {
      for (const request of requests) request.abort(reason);
    },
    renewSignal() {
      for (const request of requests) request.renewSignal?.();
    },
    onCancel: (callback) => first.onCancel(callback),
  };
}

/** One item's result as its call's execution result; a missing item fails only its call. */
function resultOf(
  request: ToolExecutionRequest,
  item: BatchResult | undefined,
  metadata: Record<string, unknown>,
): ToolExecutionResult {
  const toolId = request.toolId;
  if (item === undefined) {
    const exception = new ToolError(
      `Tool '${toolId}' returned no batch result for call ${request.context.toolCallId}`,
      { context: { toolId }, hint: "invokeBatch must return one result per item, with the item's itemId" },
    );
    return { toolId, success: false, error: exception.message, exception, metadata };
  }
  if (item.success) {
    const data = item.data;
    // A ToolResult saying `ok: false` fails its call and keeps the result, as a single call's would.
    if (isToolResult(data) && !data.ok)
      return { toolId, success: false, data, error: data.error?.message ?? data.summary, metadata };
    return { toolId, success: true, data, metadata };
  }
  const thrown = item.exception ?? new Error(item.error ?? `Tool '${toolId}' failed`);
  if (isSuspendToolCall(thrown))
    return { toolId, success: false, error: "suspended", exception: thrown, metadata };
  const exception = asToolError(thrown, toolId);
  return { toolId, success: false, error: item.error ?? exception.message, exception, metadata };
}
