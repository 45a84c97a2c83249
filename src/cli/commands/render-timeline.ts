import { styleText } from "node:util";
import { formatCost, formatCount, formatDuration, plural } from "./format-figures.js";
import type {
  RunTimelineView,
  TimelineMark,
  TimelineModelCall,
  TimelineStep,
  TimelineToolCall,
  TimelineUsage,
} from "./run-timeline.js";

type Format = Parameters<typeof styleText>[0];
/** Colours text, or leaves it as it is off a terminal. */
export type Paint = (format: Format, text: string) => string;

/** Colour on a terminal (the caller decides: TTY, NO_COLOR), plain text elsewhere. */
export function painter(color: boolean): Paint {
  if (!color) return (_format, text) => text;
  // Newer Node versions would otherwise check process.stdout again, which is not necessarily where this goes.
  return (format, text) => styleText(format, text, { validateStream: false });
}

export interface RenderTimelineOptions {
  /** Columns of the bar area. Default 40. */
  barWidth?: number;
  paint: Paint;
  /** Tool arguments and results are cut to this many characters. Default 60. */
  maxValueChars?: number;
}

const LABEL_WIDTH = 26;
const MARKS: Readonly<Record<TimelineMark["mark"], [string, Format]>> = {
  suspended: ["⏸", "yellow"],
  decision: ["✔", "cyan"],
  waited: ["┄", "dim"],
  resumed: ["▶", "cyan"],
  failed: ["✗", "red"],
  cancelled: ["✗", "red"],
  retry: ["↻", "yellow"],
};

/**
 * A run's timeline as terminal lines: a header, an axis, then one row per step, model call and tool call with a
 * bar placed by when it started and sized by how long it took, and its figures (duration, tokens, cost, outcome);
 * suspensions, decisions, resumes and errors as lines of their own where they happened.
 */
export function renderTimeline(view: RunTimelineView, options: RenderTimelineOptions): string[] {
  const { paint } = options;
  const width = Math.max(10, options.barWidth ?? 40);
  const total = Math.max(view.activeMs, 1);
  const bar = (start: number, end: number, format: Format): string => {
    const from = Math.min(width - 1, Math.floor((start / total) * width));
    const length = Math.max(1, Math.min(width - from, Math.round(((end - start) / total) * width)));
    return `${paint("dim", "·".repeat(from))}${paint(format, "█".repeat(length))}${paint("dim", "·".repeat(width - from - length))}`;
  };
  const lines = [header(view, paint), `${" ".repeat(LABEL_WIDTH)}${axis(view.activeMs, width)}`];
  const cut = (value: unknown) => preview(value, options.maxValueChars ?? 60);
  for (const item of view.items) {
    switch (item.kind) {
      case "step":
        lines.push(row(`step ${item.step}`, bar(item.startMs, item.endMs, "blue"), stepFigures(item)));
        break;
      case "model":
        lines.push(row(`  chat ${item.model}`, bar(item.startMs, item.endMs, "magenta"), modelFigures(item)));
        break;
      case "tool":
        lines.push(
          row(
            `  ${item.toolId}`,
            bar(item.startMs, item.endMs, item.outcome === "failed" ? "red" : "green"),
            toolFigures(item, cut, paint),
          ),
        );
        break;
      default:
        lines.push(...markLines(item, paint));
    }
  }
  return lines;
}

function header(view: RunTimelineView, paint: Paint): string {
  const result = view.result;
  const status = result?.stopReason ?? "not finished";
  const color: Format = status === "completed" ? "green" : status === "suspended" ? "yellow" : "red";
  const parts = [plural(view.steps, "step"), formatDuration(view.activeMs)];
  if (view.elapsedMs > view.activeMs) parts.push(`${formatDuration(view.elapsedMs)} with waits`);
  if (result !== undefined) {
    const usage = result.usage;
    parts.push(`${formatCount(usage.inputTokens)} in / ${formatCount(usage.outputTokens)} out`);
    parts.push(usage.costUsd === null ? "cost n/a" : formatCost(usage.costUsd));
  }
  return `${paint(["bold", color], status)} ${paint("dim", `· ${parts.join(" · ")}`)}`;
}

/** `0 ms` at the left, the run's active time at the right. */
function axis(totalMs: number, width: number): string {
  const left = "0";
  const right = formatDuration(totalMs);
  return `${left}${" ".repeat(Math.max(1, width - left.length - right.length))}${right}`;
}

function row(label: string, bars: string, figures: string): string {
  const chars = Array.from(label);
  const fitted =
    chars.length > LABEL_WIDTH - 1
      ? `${chars.slice(0, LABEL_WIDTH - 2).join("")}…`
      : label.padEnd(LABEL_WIDTH - 1);
  return `${fitted} ${bars}  ${figures}`;
}

function usageText(usage: TimelineUsage): string {
  const tokens = `${formatCount(usage.inputTokens)} in / ${formatCount(usage.outputTokens)} out`;
  return usage.costUsd === null ? tokens : `${tokens} · ${formatCost(usage.costUsd)}`;
}

function stepFigures(step: TimelineStep): string {
  return `${formatDuration(step.durationMs)} · ${usageText(step)}${step.finished ? "" : " · unfinished"}`;
}

function modelFigures(call: TimelineModelCall): string {
  if (call.error !== undefined) return `✗ ${call.error}`;
  if (!call.done) return "no answer";
  const stop = call.stopReason === undefined ? "" : ` · ${call.stopReason}`;
  return `${formatDuration(call.durationMs)} · ${usageText(call)}${stop}`;
}

function toolFigures(call: TimelineToolCall, cut: (value: unknown) => string, paint: Paint): string {
  const args = paint("dim", cut(call.params));
  switch (call.outcome) {
    case "ok":
      return `${formatDuration(call.durationMs)} ${args} → ${cut(call.result)}`;
    case "failed":
      return `${formatDuration(call.durationMs)} ${args} ${paint("red", `✗ ${cut(call.error)}`)}`;
    case "suspended":
      return `${args} ${paint("yellow", "⏸ suspended")}`;
    default:
      return `${args} running`;
  }
}

function markLines(mark: TimelineMark, paint: Paint): string[] {
  const [symbol, format] = MARKS[mark.mark];
  const text =
    mark.mark === "waited" && mark.waitedMs !== undefined
      ? `${mark.text}: ${formatDuration(mark.waitedMs)} (left out of the time axis)`
      : mark.text;
  const lines = [paint(format, `${symbol} ${text}`)];
  if (mark.hint !== undefined) lines.push(paint("dim", `  hint: ${mark.hint}`));
  return lines;
}

/** A value on one line: strings as they are, anything else as JSON, cut at `max` characters. */
export function preview(value: unknown, max: number): string {
  let text: string;
  if (typeof value === "string") text = value;
  else if (value === undefined) text = "";
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      // Cyclic or BigInt-holding values still deserve a line.
      text = String(value);
    }
  }
  const chars = Array.from(text.replace(/\s*\n\s*/g, " "));
  return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : chars.join("");
}
