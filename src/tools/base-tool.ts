import {
  type BatchItem,
  type BatchResult,
  DEFAULT_EXECUTION_SPEC,
  type JsonSchema,
  type RunContext,
  type Tool,
  type ToolContext,
  type ToolExecutionSpec,
} from "../contracts/tool.js";

/**
 * A class to extend for full tools. Every member but `invoke` has the default the spec names:
 * an empty object schema, the default execution spec, approval only when `approvalMode` is "always",
 * `invokeBatch` looping `invoke`.
 */
export abstract class BaseTool<
  Params extends Record<string, unknown> = Record<string, unknown>,
  Result = unknown,
> implements Tool<Params, Result>
{
  abstract readonly name: string;
  abstract readonly description: string;
  readonly durableIdempotent: boolean = true;

  abstract invoke(params: Params, ctx: ToolContext): Result | Promise<Result>;

  schema(): JsonSchema {
    return { type: "object", properties: {} };
  }

  executionSpec(): ToolExecutionSpec {
    return DEFAULT_EXECUTION_SPEC;
  }

  describe(): { name: string; description: string; parameters: JsonSchema } {
    return { name: this.name, description: this.description, parameters: this.schema() };
  }

  getDependencies(): string[] {
    return [];
  }

  requiresApproval(_params: Params, _ctx: ToolContext): boolean | Promise<boolean> {
    return this.executionSpec().approvalMode === "always";
  }

  beforeInvoke(_params: Params, _ctx: ToolContext): void | Promise<void> {}

  // biome-ignore lint/complexity/useMaxParams: the tool seam's published hook signature (params, ctx, result, error)
  afterInvoke(_params: Params, _ctx: ToolContext, _result: unknown, _error?: unknown): void | Promise<void> {}

  fallback(_error: unknown, _params: Params, _ctx: ToolContext): unknown {
    return undefined;
  }

  preflight(_ctx: RunContext): void | Promise<void> {}

  /** Runs the items one after another, keeping their order and ids. Override to batch natively. */
  async invokeBatch(items: BatchItem<Params>[], ctx: ToolContext): Promise<BatchResult[]> {
    const results: BatchResult[] = [];
    for (const item of items) {
      try {
        results.push({ itemId: item.itemId, success: true, data: await this.invoke(item.params, ctx) });
      } catch (error) {
        results.push({
          itemId: item.itemId,
          success: false,
          error: error instanceof Error ? error.message : String(error),
          exception: error,
        });
      }
    }
    return results;
  }
}
