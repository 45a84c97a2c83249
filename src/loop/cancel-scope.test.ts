import { describe, expect, it } from "vitest";
import { CancelScope } from "./cancel-scope.js";

describe("CancelScope", () => {
  it("calls every registered callback once, the first cancellation wins", () => {
    const scope = new CancelScope();
    const calls: string[] = [];
    scope.onCancel((reason) => calls.push(`one:${JSON.stringify(reason)}`));
    scope.onCancel(() => calls.push("two"));
    scope.onCancel(() => calls.push("three"));
    expect(scope.cancel({ type: "cancelled", value: "stop" })).toBe(true);
    expect(scope.cancel({ type: "stopped", value: "timeout" })).toBe(false);
    expect(calls).toEqual(['one:{"type":"cancelled","value":"stop"}', "two", "three"]);
    expect(scope.termination).toEqual({ type: "cancelled", value: "stop" });
  });

  it("unregisters callbacks in the slot and in the list", () => {
    const scope = new CancelScope();
    const calls: string[] = [];
    const offOne = scope.onCancel(() => calls.push("one"));
    const offTwo = scope.onCancel(() => calls.push("two"));
    scope.onCancel(() => calls.push("three"));
    offOne();
    offTwo();
    offTwo();
    scope.cancel({ type: "cancelled" });
    expect(calls).toEqual(["three"]);
  });

  it("runs a late callback at once and aborts a signal made before or after", () => {
    const scope = new CancelScope();
    const early = scope.signal;
    scope.cancel({ type: "cancelled" });
    expect(early.aborted).toBe(true);
    expect(scope.signal.aborted).toBe(true);
    const late: unknown[] = [];
    scope.onCancel((reason) => late.push(reason))();
    expect(late).toEqual([{ type: "cancelled" }]);
    expect(scope.cancelled).toBe(true);
  });
});
