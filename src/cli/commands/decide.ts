import { ERROR_CODES } from "../../errors/error-codes.js";
import type { ToolDecision } from "../../loop/decisions.js";
import { describePendingCall } from "./ask-decisions.js";
import type { CheckpointsCommandOptions } from "./checkpoints.js";
import { type RunOutputOptions, storedRunCost, streamRunCommand, withStoredRun } from "./run.js";

/** What `keel decide` needs. */
export interface DecideCommandOptions extends RunOutputOptions {
  configPath: string;
  runId: string;
  /** One decision, on one suspended call of the run. */
  decision: ToolDecision;
}

/**
 * `keel decide <config> <runId> <toolCallId> approve|deny|result`: decide a suspended call of a run in the
 * config's store — from any shell, the run need not be live anywhere — and stream the run as it goes on,
 * as `keel run` does. Exit codes are `keel run`'s (2 when the run waits again, for its other calls or new
 * ones); a refused decision (unknown run or call, a call already decided, a run not waiting) prints its code,
 * message and hint and exits 2.
 */
export function decideCommand(options: DecideCommandOptions): Promise<number> {
  const { runId, decision, signal } = options;
  return streamRunCommand({
    ...options,
    refusalCodes: [ERROR_CODES.DECISION, ERROR_CODES.RUN_UNKNOWN],
    chunks: (runtime) => runtime.stream({ runId, decisions: [decision], signal }),
    costSoFar: (runtime) => storedRunCost(runtime, runId),
  });
}

/** What `keel pending` needs: what `keel checkpoints` does, a config and a run. */
export type PendingCommandOptions = CheckpointsCommandOptions;

/**
 * `keel pending <config> <runId>`: the calls the run waits on, from its record — id, tool, arguments, reason —
 * or with `json` one SuspendedToolCall per line. Exit 0, also when it waits on none; a run the store does not
 * know prints an error with its hint and exits 2.
 */
export async function pendingCommand(options: PendingCommandOptions): Promise<number> {
  const { runId, stdout } = options;
  return withStoredRun(options, async (_runtime, run) => {
    const pending = run.status === "waiting" ? run.pendingToolCalls : [];
    if (options.json) {
      for (const call of pending) stdout.write(`${JSON.stringify(call)}\n`);
      return 0;
    }
    if (pending.length === 0) {
      stdout.write(
        `Run ${runId} is not waiting for a decision (it is ${run.status}${run.stopReason ? `, ${run.stopReason}` : ""}).\n`,
      );
      return 0;
    }
    for (const call of pending) stdout.write(`${describePendingCall(call)}\n`);
    return 0;
  });
}
