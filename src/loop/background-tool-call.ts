import type { ToolCallState } from "../contracts/hook.js";
import { type BackgroundJobSlot, isBackgroundTool, type JobHandle, type Tool } from "../contracts/tool.js";
// The stage sees the driver through its view: run-driver.ts imports this module.
import type { RunDriverView as RunDriver } from "./run-driver-view.js";
import type { ToolCallRecord } from "./run-state.js";

/**
 * Where a background tool's call keeps its job: the call's state, so every checkpoint records the handle. A
 * submitted job is announced (`tool.background.submitted`) and, in a durable run, checkpointed before it is
 * polled, so a run resumed from then on polls that job instead of submitting another.
 */
export function backgroundJobSlot(driver: RunDriver, state: ToolCallState): BackgroundJobSlot {
  return {
    get handle(): JobHandle | undefined {
      return state.job;
    },
    submitted(handle: JobHandle): Promise<void> {
      state.job = { ...handle };
      driver.log.emit("tool.background.submitted", {
        toolId: state.toolId,
        toolCallId: state.id,
        jobId: handle.jobId,
      });
      return driver.durable ? inTurn(driver, () => driver.checkpoint("tools")) : Promise.resolve();
    },
    finished(): void {
      delete state.job;
    },
  };
}

/**
 * A resumed step's call that was running a background job when the run stopped: it runs again with the recorded
 * job, which it polls rather than submitting a new one (whatever the tool's `durableIdempotent`).
 */
export function resumesBackgroundJob(
  tool: Tool | undefined,
  state: ToolCallState,
  prior: ToolCallRecord,
): boolean {
  if (prior.job === undefined || tool === undefined || !isBackgroundTool(tool)) return false;
  state.job = { ...prior.job };
  return true;
}

/** Checkpoints asked for by the jobs of one parallel stage are written one after another, never together. */
const writing = new WeakMap<RunDriver, Promise<unknown>>();

function inTurn(driver: RunDriver, write: () => Promise<unknown>): Promise<void> {
  const next = (writing.get(driver) ?? Promise.resolve()).then(write, write);
  writing.set(driver, next);
  return next.then(noop);
}

function noop(): void {}
