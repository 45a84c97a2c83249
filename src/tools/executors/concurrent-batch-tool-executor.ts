import { z } from "zod";
import type {
  BatchToolExecutor,
  StreamingToolExecutor,
  ToolExecutionRequest,
  ToolExecutionResult,
  ToolExecutionStreamPart,
  ToolExecutor,
} from "../../contracts/tool.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";
import { executeStreamOf, executeToolCall } from "../execute-tool-call.js";

export const concurrentBatchToolExecutorConfigSchema = builtOnFirstUse(() =>
  z.object({
    inner: z.unknown().default({ type: "safe" }),
    max_concurrency: z.number().int().min(1).default(10),
  }),
);

/**
 * Parallel mode: the `concurrencySafe` calls of a step run together, at most `max_concurrency` at a
 * time; the others run one by one after them. Results come back in the order of the requests.
 */
export class ConcurrentBatchToolExecutor implements BatchToolExecutor, StreamingToolExecutor {
  constructor(
    readonly inner: ToolExecutor,
    readonly maxConcurrency = 10,
  ) {}

  execute(request: ToolExecutionRequest): Promise<ToolExecutionResult> {
    return this.inner.execute(request);
  }

  executeStream(request: ToolExecutionRequest): AsyncIterable<ToolExecutionStreamPart> {
    return executeStreamOf(this.inner, request);
  }

  async executeBatch(requests: ToolExecutionRequest[]): Promise<ToolExecutionResult[]> {
    const results = new Array<ToolExecutionResult>(requests.length);
    const concurrent: number[] = [];
    const sequential: number[] = [];
    requests.forEach((request, index) => {
      (request.executionSpec.concurrencySafe ? concurrent : sequential).push(index);
    });
    let next = 0;
    const worker = async () => {
      while (next < concurrent.length) {
        const index = concurrent[next++]!;
        results[index] = await executeToolCall(this.inner, requests[index]!);
      }
    };
    const workers: Promise<void>[] = [];
    for (let count = 0; count < Math.min(this.maxConcurrency, concurrent.length); count++)
      workers.push(worker());
    await Promise.all(workers);
    for (const index of sequential) results[index] = await executeToolCall(this.inner, requests[index]!);
    return results;
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }
}
