import { painter, renderTimeline } from "./render-timeline.js";
import { withStoredRun } from "./run.js";
import { RunTimeline } from "./run-timeline.js";
import type { OutputStream } from "./validate.js";

export interface TraceCommandOptions {
  configPath: string;
  runId: string;
  json: boolean;
  stdout: OutputStream;
  stderr: OutputStream;
  /** Whether stdout is a terminal: colour, and bars as wide as it allows. */
  isTTY: boolean;
  /** The terminal's width in columns, when it is one. */
  columns?: number;
  env?: Readonly<Record<string, string | undefined>>;
}

/** Columns a row spends besides its bars: the label, and room for the figures after them. */
const ROW_COLUMNS = 26 + 2 + 44;

/**
 * `keel trace <config> <runId>`: the run's stored event log drawn as a timeline — steps, model calls with tokens
 * and cost, tool calls, suspensions, decisions and errors as bars placed and sized by time — or, with `--json`,
 * the timeline as one JSON object. Exit 0; a run the store does not know prints an error with its hint, exit 2.
 */
export async function traceCommand(options: TraceCommandOptions): Promise<number> {
  const env = options.env ?? process.env;
  return withStoredRun(options, async (runtime) => {
    const timeline = new RunTimeline();
    for (const event of await runtime.sessionManager.loadEvents(options.runId)) timeline.add(event);
    const view = timeline.view();
    if (options.json) {
      options.stdout.write(`${JSON.stringify({ runId: options.runId, ...view })}\n`);
      return 0;
    }
    if (view.items.length === 0) {
      options.stdout.write(`Run ${options.runId} has no stored events to draw.\n`);
      return 0;
    }
    const columns = options.isTTY && options.columns !== undefined ? options.columns : 120;
    const lines = renderTimeline(view, {
      paint: painter(options.isTTY && !env.NO_COLOR),
      barWidth: Math.min(60, Math.max(20, columns - ROW_COLUMNS)),
    });
    options.stdout.write(`run ${options.runId}\n${lines.join("\n")}\n`);
    return 0;
  });
}
