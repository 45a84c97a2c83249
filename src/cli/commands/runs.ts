import type { RunStatus } from "../../contracts/run-types.js";
import { Runtime } from "../../runtime/runtime.js";
import type { OutputStream } from "./validate.js";

export interface RunsCommandOptions {
  configPath: string;
  sessionId?: string;
  status?: RunStatus;
  json: boolean;
  stdout: OutputStream;
}

/** `keel runs <config>`: the runs the config's session store knows, newest last. Exit 0. */
export async function runsCommand(options: RunsCommandOptions): Promise<number> {
  const runtime = await Runtime.fromConfig(options.configPath);
  try {
    const filter: { sessionId?: string; status?: RunStatus } = {};
    if (options.sessionId !== undefined) filter.sessionId = options.sessionId;
    if (options.status !== undefined) filter.status = options.status;
    const runs = await runtime.listRuns(filter);
    if (options.json) {
      for (const run of runs) options.stdout.write(`${JSON.stringify(run)}\n`);
      return 0;
    }
    if (runs.length === 0) {
      options.stdout.write(
        "No runs in this store. (The in_memory store forgets runs when its process ends.)\n",
      );
      return 0;
    }
    for (const run of runs) {
      const pending =
        run.pendingToolCalls.length > 0
          ? ` · ${run.pendingToolCalls.length} call(s) awaiting a decision`
          : "";
      options.stdout.write(
        `${run.runId}  ${run.status}${run.stopReason ? ` (${run.stopReason})` : ""}  agent ${run.agentId}  session ${run.sessionId}  ${run.updatedAt}${pending}\n`,
      );
    }
    return 0;
  } finally {
    await runtime.close();
  }
}
