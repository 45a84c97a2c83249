import type { RunContext } from "../contracts/tool.js";
import type { RunEventLog } from "../events/run-event-log.js";
import { isPromiseLike } from "../tools/executors/safe-tool-executor.js";
import type { ResolvedAgent } from "./resolved-agent.js";

/**
 * The run's memory written back once the pattern answered, between its two events. A memory whose `writeback`
 * returns no promise (the buffer memory) is done when this returns: the run's end waits for nothing.
 */
export function writeBackMemory(
  agent: ResolvedAgent,
  ctx: RunContext,
  log: RunEventLog,
): void | Promise<void> {
  log.emit("memory.writeback.started", {});
  let written: unknown;
  try {
    written = agent.memory.writeback(ctx);
  } catch (error) {
    return writebackFailed(agent, log, error);
  }
  // A memory that writes at once (the buffer memory) is done here; one that returns a promise is waited for.
  if (!isPromiseLike(written)) {
    log.emit("memory.writeback.completed", {});
    return;
  }
  return Promise.resolve(written).then(
    () => {
      log.emit("memory.writeback.completed", {});
    },
    (error: unknown) => writebackFailed(agent, log, error),
  );
}

function writebackFailed(agent: ResolvedAgent, log: RunEventLog, error: unknown): void {
  log.emit("memory.writeback_failed", { error: (error as Error).message });
  if (agent.memoryOnError === "fail") throw error;
}
