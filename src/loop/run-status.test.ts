import { describe, expect, it } from "vitest";
import type { RunStatus, ToolCallStatus } from "../contracts/run-types.js";
import { IllegalTransitionError } from "../errors/error-classes.js";
import {
  canTransitionRun,
  canTransitionToolCall,
  isTerminalToolCallStatus,
  summarizeToolPhase,
  transitionRun,
  transitionToolCall,
} from "./run-status.js";

const RUN: RunStatus[] = ["created", "running", "waiting", "done"];
const RUN_ALLOWED = new Set([
  "created>running",
  "created>done",
  "running>waiting",
  "running>done",
  "waiting>running",
  "waiting>done",
]);

const CALL: ToolCallStatus[] = [
  "new",
  "running",
  "suspended",
  "resuming",
  "succeeded",
  "failed",
  "cancelled",
];
const CALL_ALLOWED = new Set([
  "new>running",
  "new>suspended",
  "new>succeeded",
  "new>failed",
  "new>cancelled",
  "running>succeeded",
  "running>failed",
  "running>cancelled",
  "running>suspended",
  "suspended>resuming",
  "suspended>cancelled",
  "resuming>running",
  "resuming>suspended",
  "resuming>succeeded",
  "resuming>failed",
  "resuming>cancelled",
]);

describe("run status, every pair", () => {
  for (const from of RUN) {
    for (const to of RUN) {
      const legal = from === to || RUN_ALLOWED.has(`${from}>${to}`);
      it(`${from} → ${to} is ${legal ? "allowed" : "refused"}`, () => {
        expect(canTransitionRun(from, to)).toBe(legal);
        if (legal) expect(transitionRun(from, to)).toBe(to);
        else {
          expect(() => transitionRun(from, to)).toThrow(IllegalTransitionError);
          expect(() => transitionRun(from, to)).toThrow(`A run cannot go from "${from}" to "${to}"`);
        }
      });
    }
  }

  it("names what is allowed in the hint", () => {
    try {
      transitionRun("done", "running");
      expect.unreachable();
    } catch (error) {
      expect((error as IllegalTransitionError).hint).toBe('Allowed from "done": nothing (done is final)');
      expect((error as IllegalTransitionError).code).toBe("state.illegal_transition");
    }
  });
});

describe("tool-call status, every pair", () => {
  for (const from of CALL) {
    for (const to of CALL) {
      const legal = from === to || CALL_ALLOWED.has(`${from}>${to}`);
      it(`${from} → ${to} is ${legal ? "allowed" : "refused"}`, () => {
        expect(canTransitionToolCall(from, to)).toBe(legal);
        if (legal) expect(transitionToolCall(from, to)).toBe(to);
        else expect(() => transitionToolCall(from, to)).toThrow(IllegalTransitionError);
      });
    }
  }

  it("marks exactly succeeded, failed and cancelled terminal", () => {
    expect(CALL.filter(isTerminalToolCallStatus)).toEqual(["succeeded", "failed", "cancelled"]);
  });
});

describe("summarizeToolPhase", () => {
  it("is running while any call runs or resumes", () => {
    expect(summarizeToolPhase(["succeeded", "running", "suspended"])).toBe("running");
    expect(summarizeToolPhase(["suspended", "resuming"])).toBe("running");
  });
  it("waits when calls are settled but one is suspended", () => {
    expect(summarizeToolPhase(["succeeded", "suspended", "failed"])).toBe("waiting");
  });
  it("settles when every call is terminal, or there are none", () => {
    expect(summarizeToolPhase(["succeeded", "failed", "cancelled"])).toBe("settled");
    expect(summarizeToolPhase([])).toBe("settled");
  });
});
