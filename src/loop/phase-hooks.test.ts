import { describe, expect, it } from "vitest";
import {
  type Hook,
  type HookContext,
  PHASES,
  type Phase,
  type ToolCallState,
  type ToolGateDecision,
} from "../contracts/hook.js";
import { PhaseHooks } from "./phase-hooks.js";

function context(phase: Phase): HookContext {
  return { phase, run: {} as HookContext["run"], step: 1, requestStop: () => {} };
}

const call: ToolCallState = { id: "call_1", toolId: "search", params: { q: "x" }, status: "new" };

const RUN_PHASES = PHASES.filter((phase): phase is Exclude<Phase, "toolGate"> => phase !== "toolGate");

describe("PhaseHooks", () => {
  it("lists the nine phases in their fixed order", () => {
    expect(PHASES).toEqual([
      "runStart",
      "stepStart",
      "beforeInference",
      "afterInference",
      "toolGate",
      "beforeToolExecute",
      "afterToolExecute",
      "stepEnd",
      "runEnd",
    ]);
  });

  it("runs each phase's hooks in registration order, awaiting each", async () => {
    const order: string[] = [];
    const make = (name: string, delay: number): Hook => {
      const hook: Hook = {};
      for (const phase of RUN_PHASES) {
        hook[phase] = async (ctx) => {
          for (let tick = 0; tick < delay; tick++) await Promise.resolve();
          order.push(`${name}:${ctx.phase}`);
        };
      }
      return hook;
    };
    const hooks = new PhaseHooks([make("slow", 5), make("fast", 0), make("mid", 2)]);
    for (const phase of RUN_PHASES) await hooks.run(phase, context(phase));
    expect(order).toEqual(RUN_PHASES.flatMap((phase) => [`slow:${phase}`, `fast:${phase}`, `mid:${phase}`]));
  });

  it("sorts hooks by phase and skips phases a hook does not implement", async () => {
    const order: string[] = [];
    const hooks = new PhaseHooks([
      { runStart: () => void order.push("a:runStart") },
      { stepEnd: () => void order.push("b:stepEnd"), runStart: () => void order.push("b:runStart") },
    ]);
    expect(hooks.runStart).toHaveLength(2);
    expect(hooks.stepEnd).toHaveLength(1);
    expect(hooks.beforeInference).toHaveLength(0);
    expect(hooks.toolGate).toHaveLength(0);
    await hooks.run("beforeInference", context("beforeInference"));
    await hooks.run("runStart", context("runStart"));
    await hooks.run("stepEnd", context("stepEnd"));
    expect(order).toEqual(["a:runStart", "b:runStart", "b:stepEnd"]);
  });

  it("calls hooks with the hook as this and the context", async () => {
    class Counter implements Hook {
      count = 0;
      seen: HookContext[] = [];
      stepStart(ctx: HookContext): void {
        this.count++;
        this.seen.push(ctx);
      }
    }
    const counter = new Counter();
    const hooks = new PhaseHooks([counter]);
    const ctx = context("stepStart");
    await hooks.run("stepStart", ctx);
    await hooks.run("stepStart", ctx);
    expect(counter.count).toBe(2);
    expect(counter.seen).toEqual([ctx, ctx]);
  });

  it("stops at a failing hook and rejects with its error", async () => {
    const order: string[] = [];
    const failure = new Error("hook failed");
    const hooks = new PhaseHooks([
      {
        runStart: () => {
          throw failure;
        },
      },
      { runStart: () => void order.push("second") },
    ]);
    await expect(hooks.run("runStart", context("runStart"))).rejects.toBe(failure);
    expect(order).toEqual([]);
  });

  it("has no hooks by default", async () => {
    const hooks = new PhaseHooks();
    await expect(hooks.run("runEnd", context("runEnd"))).resolves.toBeUndefined();
    await expect(hooks.gate(context("toolGate"), call)).resolves.toBeUndefined();
  });

  describe("gate", () => {
    it("returns the first decision other than allow and asks no later gate", async () => {
      const asked: string[] = [];
      const gate =
        (name: string, decision: ToolGateDecision | undefined): Hook["toolGate"] =>
        async () => {
          asked.push(name);
          return decision;
        };
      const block: ToolGateDecision = { action: "block", reason: "not today" };
      const hooks = new PhaseHooks([
        { toolGate: gate("allow", { action: "allow" }) },
        { toolGate: gate("none", undefined) },
        { toolGate: gate("block", block) },
        { toolGate: gate("suspend", { action: "suspend", reason: "ask" }) },
      ]);
      expect(await hooks.gate(context("toolGate"), call)).toBe(block);
      expect(asked).toEqual(["allow", "none", "block"]);
    });

    it("means allow (undefined) when every gate allows or abstains", async () => {
      const hooks = new PhaseHooks([
        { toolGate: () => ({ action: "allow" }) },
        { toolGate: () => undefined },
        { toolGate: async () => undefined },
      ]);
      expect(await hooks.gate(context("toolGate"), call)).toBeUndefined();
    });

    it("passes the context and the call, and supports sync gates", async () => {
      const seen: [HookContext, ToolCallState][] = [];
      const setResult: ToolGateDecision = { action: "setResult", result: { cached: true } };
      const hooks = new PhaseHooks([
        {
          toolGate: (ctx, gated) => {
            seen.push([ctx, gated]);
            return gated.toolId === "search" ? setResult : undefined;
          },
        },
      ]);
      const ctx = context("toolGate");
      expect(await hooks.gate(ctx, call)).toBe(setResult);
      expect(seen).toEqual([[ctx, call]]);
      expect(seen[0]![1]).toBe(call);
    });
  });
});
