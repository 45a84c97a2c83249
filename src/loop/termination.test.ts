import { describe, expect, it } from "vitest";
import type { StopReason, TerminationReason } from "../contracts/run-types.js";
import { runStatusOf, stopReasonOf } from "./termination.js";

const CASES: [TerminationReason, StopReason][] = [
  [{ type: "natural_end" }, "completed"],
  [{ type: "behavior_requested", value: "hook" }, "completed"],
  [{ type: "stopped", value: "max_rounds" }, "max_steps"],
  [{ type: "stopped", value: "max_steps" }, "max_steps"],
  [{ type: "stopped", value: "max_tool_calls" }, "max_steps"],
  [{ type: "stopped", value: "timeout" }, "timeout"],
  [{ type: "stopped", value: "token_budget" }, "budget_exhausted"],
  [{ type: "stopped", value: "cost_budget" }, "budget_exhausted"],
  [{ type: "stopped", value: "stop_on_tool" }, "completed"],
  [{ type: "stopped", value: "content_match" }, "completed"],
  [{ type: "stopped", value: "consecutive_errors" }, "failed"],
  [{ type: "stopped", value: "loop_detection" }, "failed"],
  [{ type: "stopped", value: "something_new" }, "failed"],
  [{ type: "cancelled" }, "cancelled"],
  [{ type: "blocked", value: "no" }, "failed"],
  [{ type: "error", value: "boom" }, "failed"],
  [{ type: "suspended" }, "suspended"],
];

describe("termination → stop reason and status", () => {
  for (const [termination, stopReason] of CASES) {
    it(`${termination.type}${"value" in termination ? `(${termination.value})` : ""} → ${stopReason}`, () => {
      expect(stopReasonOf(termination)).toBe(stopReason);
      expect(runStatusOf(termination)).toBe(termination.type === "suspended" ? "waiting" : "done");
    });
  }
});
