import { ConfigError } from "../../errors/error-classes.js";
import { ERROR_CODES } from "../../errors/error-codes.js";
import { parseCheckpointId, type RunState } from "../../loop/run-state.js";
import type { Runtime } from "../../runtime/runtime.js";
import { type RunOutputOptions, streamRunCommand } from "./run.js";

/** What `keel resume` needs. */
export interface ResumeCommandOptions extends RunOutputOptions {
  configPath: string;
  checkpointId: string;
  /** Start a new run from the checkpoint rather than continue its run. */
  branch?: boolean;
}

/** The codes of a checkpoint the runtime refuses to resume from: printed with their hint, exit 2. */
const REFUSAL_CODES = [
  ERROR_CODES.CHECKPOINT_UNKNOWN,
  ERROR_CODES.CHECKPOINT_SCHEMA,
  ERROR_CODES.CHECKPOINT_MISMATCH,
  ERROR_CODES.CHECKPOINT_INVALID,
  ERROR_CODES.RUN_NOT_RESUMABLE,
  ERROR_CODES.RUN_BUSY,
];

/**
 * `keel resume <config> <checkpointId> [--branch]`: resume a run from a checkpoint in the config's store
 * and stream it as `keel run` does. The run's latest checkpoint continues the run itself; `branch` starts a new
 * run from the checkpoint, whichever it is. Exit codes are `keel run`'s; a refused checkpoint (unknown, written
 * by another agent shape or schema version, the latest of a finished run, one the run went past, a run another
 * process is continuing) prints its code, message and hint and exits 2.
 */
export function resumeCommand(options: ResumeCommandOptions): Promise<number> {
  const { checkpointId, signal } = options;
  return streamRunCommand({
    ...options,
    refusalCodes: REFUSAL_CODES,
    chunks: async (runtime) =>
      runtime.stream({
        agentId: await agentOfCheckpoint(runtime, checkpointId),
        inputText: "",
        resumeFromCheckpoint: checkpointId,
        ...(options.branch === true ? { branch: true } : {}),
        ...(signal === undefined ? {} : { signal }),
      }),
    costSoFar: (runtime) => checkpointCost(runtime, checkpointId),
  });
}

/** What the run had cost when the checkpoint was written; undefined when the store does not say. */
async function checkpointCost(runtime: Runtime, checkpointId: string): Promise<number | null | undefined> {
  const parsed = parseCheckpointId(checkpointId);
  const record = parsed === null ? null : await runtime.getRun(parsed.runId);
  if (record === null) return undefined;
  const checkpoint = await runtime.sessionManager.loadCheckpoint(record.sessionId, checkpointId);
  return (checkpoint?.state as Partial<RunState> | undefined)?.usage?.costUsd;
}

/**
 * The agent whose run wrote the checkpoint. `Runtime.resume` finds it the same way but resolves with the result
 * alone, and the CLI streams the run. For an id the store does not know, the config's first agent: the runtime
 * then refuses the id itself (`checkpoint.unknown`, with its hint).
 */
async function agentOfCheckpoint(runtime: Runtime, checkpointId: string): Promise<string> {
  const parsed = parseCheckpointId(checkpointId);
  const record = parsed === null ? null : await runtime.getRun(parsed.runId);
  const agents = runtime.listAgents().map((agent) => agent.id);
  if (record === null) return agents[0] ?? "";
  if (!agents.includes(record.agentId)) {
    throw new ConfigError(
      `Checkpoint '${checkpointId}' belongs to agent '${record.agentId}', which this config does not define`,
      {
        code: ERROR_CODES.CHECKPOINT_MISMATCH,
        hint: `Resume it with the config that defines agent '${record.agentId}' (this one has ${agents.join(", ")})`,
      },
    );
  }
  return record.agentId;
}
