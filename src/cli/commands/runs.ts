import type { RunRecord, RunResult, RunStatus } from "../../contracts/run-types.js";
import { Runtime } from "../../runtime/runtime.js";
import { formatCost, formatCount, formatDuration } from "./format-figures.js";
import { lastStoredResult } from "./run.js";
import type { OutputStream } from "./validate.js";

export interface RunsCommandOptions {
  configPath: string;
  sessionId?: string;
  status?: RunStatus;
  json: boolean;
  stdout: OutputStream;
}

/** One row of `keel runs`: the record, and what the run's last `run.finished` says of it (when it has one). */
interface RunRow {
  record: RunRecord;
  result: RunResult | undefined;
}

const HEADINGS = [
  "RUN",
  "AGENT",
  "STATUS",
  "STEPS",
  "ELAPSED",
  "TOKENS IN/OUT",
  "COST",
  "SESSION",
  "UPDATED",
];

/**
 * `keel runs <config>`: the runs the config's session store knows, newest last, as a table with each run's
 * steps, elapsed time (from its creation to its last change, waits included), tokens and cost as its last
 * `run.finished` reports them. `--json` prints the run records. Exit 0.
 */
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
    const rows = await Promise.all(
      runs.map(async (record) => ({ record, result: await lastStoredResult(runtime, record) })),
    );
    const table = [HEADINGS, ...rows.map(cellsOf)];
    const widths = HEADINGS.map((_, column) => Math.max(...table.map((cells) => cells[column]!.length)));
    for (const cells of table) {
      options.stdout.write(
        `${cells
          .map((cell, column) => cell.padEnd(widths[column]!))
          .join("  ")
          .trimEnd()}\n`,
      );
    }
    return 0;
  } finally {
    await runtime.close();
  }
}

function cellsOf({ record, result }: RunRow): string[] {
  const pending = record.pendingToolCalls.length;
  const status = `${record.status}${record.stopReason ? ` (${record.stopReason})` : ""}${
    pending > 0 ? ` · ${pending} awaiting a decision` : ""
  }`;
  const usage = result?.usage;
  const steps = result?.metadata?.steps;
  const elapsed = Date.parse(record.updatedAt) - Date.parse(record.createdAt);
  return [
    record.runId,
    record.agentId,
    status,
    typeof steps === "number" ? String(steps) : "-",
    Number.isFinite(elapsed) ? formatDuration(elapsed) : "-",
    usage ? `${formatCount(usage.inputTokens)} / ${formatCount(usage.outputTokens)}` : "-",
    usage ? (usage.costUsd === null ? "n/a" : formatCost(usage.costUsd)) : "-",
    record.sessionId,
    record.updatedAt,
  ];
}
