import { describe, expect, it } from "vitest";
import {
  DEFAULT_EXECUTION_SPEC,
  isBatchTool,
  type RunContext,
  type ToolContext,
  type ToolExecutionSpec,
} from "../contracts/tool.js";
import { BaseTool } from "./base-tool.js";

const ctx = {} as ToolContext;

class Doubler extends BaseTool<{ n: number }, number> {
  readonly name = "double";
  readonly description = "Double a number";
  async invoke({ n }: { n: number }): Promise<number> {
    if (n < 0) throw new Error(`negative: ${n}`);
    if (n === 13) throw "unlucky";
    return n * 2;
  }
}

class WithSpec extends Doubler {
  constructor(private readonly mode: ToolExecutionSpec["approvalMode"]) {
    super();
  }
  override executionSpec(): ToolExecutionSpec {
    return { ...DEFAULT_EXECUTION_SPEC, approvalMode: this.mode };
  }
}

describe("BaseTool", () => {
  it("has the documented defaults", async () => {
    const tool = new Doubler();
    expect(tool.schema()).toEqual({ type: "object", properties: {} });
    expect(tool.executionSpec()).toEqual(DEFAULT_EXECUTION_SPEC);
    expect(tool.durableIdempotent).toBe(true);
    expect(tool.getDependencies()).toEqual([]);
    expect(tool.fallback(new Error("x"), { n: 1 }, ctx)).toBeUndefined();
    expect(await tool.beforeInvoke({ n: 1 }, ctx)).toBeUndefined();
    expect(await tool.afterInvoke({ n: 1 }, ctx, 2)).toBeUndefined();
    expect(await tool.preflight({} as RunContext)).toBeUndefined();
    expect(isBatchTool(tool)).toBe(true);
  });

  it("requires approval only when approvalMode is always", async () => {
    expect(await new Doubler().requiresApproval({ n: 1 }, ctx)).toBe(false);
    expect(await new WithSpec("always").requiresApproval({ n: 1 }, ctx)).toBe(true);
    expect(await new WithSpec("never").requiresApproval({ n: 1 }, ctx)).toBe(false);
    expect(await new WithSpec("inherit").requiresApproval({ n: 1 }, ctx)).toBe(false);
  });

  it("describes itself with name, description and parameters", () => {
    class Described extends Doubler {
      override schema() {
        return { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
      }
    }
    expect(new Doubler().describe()).toEqual({
      name: "double",
      description: "Double a number",
      parameters: { type: "object", properties: {} },
    });
    expect(new Described().describe()).toEqual({
      name: "double",
      description: "Double a number",
      parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    });
  });

  it("invokeBatch keeps order and itemId, and a failing item does not stop the others", async () => {
    const tool = new Doubler();
    const results = await tool.invokeBatch(
      [
        { itemId: "z", params: { n: 1 } },
        { itemId: "a", params: { n: -5 } },
        { itemId: "m", params: { n: 13 } },
        { itemId: "b", params: { n: 20 } },
      ],
      ctx,
    );
    expect(results.map((result) => result.itemId)).toEqual(["z", "a", "m", "b"]);
    expect(results[0]).toEqual({ itemId: "z", success: true, data: 2 });
    expect(results[1]).toMatchObject({ itemId: "a", success: false, error: "negative: -5" });
    expect(results[1]!.exception).toBeInstanceOf(Error);
    expect((results[1]!.exception as Error).message).toBe("negative: -5");
    expect(results[2]).toEqual({ itemId: "m", success: false, error: "unlucky", exception: "unlucky" });
    expect(results[3]).toEqual({ itemId: "b", success: true, data: 40 });
  });

  it("invokeBatch runs items one after another", async () => {
    const order: string[] = [];
    class Slow extends BaseTool<{ id: string; wait: number }, string> {
      readonly name = "slow";
      readonly description = "d";
      async invoke({ id, wait }: { id: string; wait: number }): Promise<string> {
        order.push(`start ${id}`);
        for (let tick = 0; tick < wait; tick++) await Promise.resolve();
        order.push(`end ${id}`);
        return id;
      }
    }
    await new Slow().invokeBatch(
      [
        { itemId: "1", params: { id: "a", wait: 5 } },
        { itemId: "2", params: { id: "b", wait: 0 } },
      ],
      ctx,
    );
    expect(order).toEqual(["start a", "end a", "start b", "end b"]);
  });

  it("invokeBatch of no items is empty", async () => {
    expect(await new Doubler().invokeBatch([], ctx)).toEqual([]);
  });
});
