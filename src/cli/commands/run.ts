import type { AppConfig } from "../../config/app-config-schema.js";
import { formatConfigError } from "../../config/config-issues.js";
import { loadConfig } from "../../config/load-config.js";
import type { RunRecord, RunResult, StopReason } from "../../contracts/run-types.js";
import { UnknownRunError } from "../../errors/error-classes.js";
import { type ErrorDetails, KeelError, toErrorDetails } from "../../errors/keel-error.js";
import { Runtime } from "../../runtime/runtime.js";
import type { RunStreamChunk } from "../../runtime/stream-chunk.js";
import { InMemorySessionManager } from "../../sessions/in-memory-session-manager.js";
import { askDecisions, type Prompt } from "./ask-decisions.js";
import { formatCost, formatCount, formatDuration, plural } from "./format-figures.js";
import { type Paint, painter, preview as previewCut } from "./render-timeline.js";
import { runNotices } from "./run-notices.js";
import { RunTimeline, type TimelineStep } from "./run-timeline.js";
import type { OutputStream } from "./validate.js";

/**
 * Where `keel run`, `keel resume` and `keel decide` print, and how; streams and environment are passed in so
 * tests run them in-process.
 */
export interface RunOutputOptions {
  /** One JSON stream chunk per line on stdout instead of the readable rendering. */
  json: boolean;
  stdout: OutputStream;
  stderr: OutputStream;
  /** Whether stdout is a terminal: colour is only used on one. */
  isTTY: boolean;
  /** Where `NO_COLOR` and `KEEL_DEBUG` are read; `process.env` when absent. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Aborting it cancels the run (Ctrl-C). */
  signal?: AbortSignal;
  /**
   * Asks the user a question at the terminal. With it, on a TTY and without `json`, a run that suspends asks
   * to approve or deny each pending call and goes on with the answers (main.ts wires it to stdin).
   */
  prompt?: Prompt;
}

/** What `keel run` needs. */
export interface RunCommandOptions extends RunOutputOptions {
  configPath: string;
  input: string;
  /** The agent to run; the config's first agent when absent. */
  agentId?: string;
  /** Continue this session; a new one when absent. */
  sessionId?: string;
  /** Checkpoint after every model call, tool call and step (`durable: true`). */
  durable?: boolean;
}

/** What {@link streamRunCommand} needs besides where to print. */
export interface StreamRunOptions extends RunOutputOptions {
  configPath: string;
  /**
   * The run to stream, once the config's runtime is loaded: its chunks, `run.finished` last, as
   * `runtime.stream(request)` yields them. The chunks may reject with an error that refuses the request.
   */
  chunks: (
    runtime: Runtime,
    config: AppConfig,
  ) => AsyncIterable<RunStreamChunk> | Promise<AsyncIterable<RunStreamChunk>>;
  /**
   * Codes of errors that refuse the request before it starts (an unknown checkpoint, say): they are printed as
   * `code: message` with their hint and exit {@link REFUSED_EXIT_CODE}. Any other error exits 1.
   */
  refusalCodes?: readonly string[];
  /**
   * What the run had cost before the stream starts, for a stream that continues a run (a decision, a resume):
   * the first step's cost is then what the total grew by. Unknown (undefined) leaves that step's cost out.
   */
  costSoFar?: (runtime: Runtime) => Promise<number | null | undefined>;
}

/** Exit codes: the shell tells a finished run from one waiting for a human from everything else. */
export const RUN_EXIT_CODES = Object.freeze({ completed: 0, failed: 1, suspended: 2 });

/** What `keel resume` and `keel checkpoints` exit with when the store refuses the checkpoint or lacks the run. */
export const REFUSED_EXIT_CODE = 2;

/** Tool arguments and results longer than this are cut, so one call stays one readable line. */
const MAX_VALUE_CHARS = 200;

/**
 * `keel run <config> "<input>"`: load the runtime, run one agent on the input and stream what it does —
 * assistant text as it arrives, one line per tool call, a summary — or, with `json`, every stream chunk as a
 * JSON line. Returns 0 when the run completed, 2 when it is suspended awaiting a decision, and 1 for any other
 * stop reason or a config/plugin error (printed as the error's string form with its hint, never a stack).
 */
export function runCommand(options: RunCommandOptions): Promise<number> {
  return streamRunCommand({
    ...options,
    chunks: (runtime, config) => {
      const agentId = options.agentId ?? runtime.listAgents()[0]?.id ?? "";
      const durable = options.durable === true;
      for (const notice of runNotices({ config, runtime, agentId, durable }))
        options.stderr.write(`${notice}\n`);
      return runtime.stream({
        agentId,
        inputText: options.input,
        ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
        ...(durable ? { durable: true } : {}),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    },
  });
}

/**
 * Load the config's runtime, stream the run `options.chunks` gives with the readable or JSON rendering, and
 * return its exit code: 0 completed, 2 suspended, 1 anything else; see {@link StreamRunOptions.refusalCodes}
 * for errors that refuse the request. With a `prompt` on a TTY, a run that suspends asks for decisions and is
 * followed into its resumption, as often as it suspends. The runtime is closed whatever happens.
 */
export async function streamRunCommand(options: StreamRunOptions): Promise<number> {
  const { stdout, stderr, signal } = options;
  const env = options.env ?? process.env;
  const debug = env.KEEL_DEBUG === "1";
  const ask = options.isTTY && !options.json ? options.prompt : undefined;
  let runtime: Runtime | undefined;
  try {
    const loaded = await loadConfig(options.configPath);
    runtime = new Runtime(loaded.config, { configPath: loaded.path, baseDir: loaded.baseDir });
    await runtime.ready();
    const costSoFar = options.json ? undefined : await options.costSoFar?.(runtime);
    const renderer = options.json
      ? jsonRenderer(stdout)
      : readableRenderer(stdout, painter(options.isTTY && !env.NO_COLOR), new RunTimeline({ costSoFar }));
    let chunks = await options.chunks(runtime, loaded.config);
    for (;;) {
      let result: RunResult | undefined;
      for await (const chunk of chunks) {
        renderer(chunk);
        if (chunk.kind === "run.finished") {
          result = chunk.result;
        }
      }
      if (!result) {
        // The runtime promises run.finished last; without it the run's outcome is unknown.
        stderr.write("The run's stream ended without run.finished\n");
        return RUN_EXIT_CODES.failed;
      }
      const decisions =
        result.stopReason === "suspended" && ask !== undefined && !signal?.aborted
          ? await askDecisions(result.pendingToolCalls, ask, stdout)
          : null;
      if (decisions !== null) {
        chunks = runtime.stream({ runId: result.runId, decisions, signal });
        continue;
      }
      if (result.stopReason !== "completed") {
        reportProblem(result, { stderr, debug, hint: decideHint(runtime, options.configPath) });
      }
      return exitCodeOf(result.stopReason);
    }
  } catch (error) {
    // A program reading --json reads stdout: the error that stopped the command is a line there too.
    if (options.json) stdout.write(`${JSON.stringify({ kind: "error", error: toErrorDetails(error) })}\n`);
    if (KeelError.isInstance(error) && options.refusalCodes?.includes(error.code)) {
      stderr.write(`${describeDetails(toErrorDetails(error))}\n`);
      return REFUSED_EXIT_CODE;
    }
    stderr.write(`${describeError(error, debug)}\n`);
    return RUN_EXIT_CODES.failed;
  } finally {
    await runtime?.close();
  }
}

/** 0 completed, 2 suspended, 1 otherwise. */
export function exitCodeOf(stopReason: StopReason): number {
  if (stopReason === "completed") return RUN_EXIT_CODES.completed;
  if (stopReason === "suspended") return RUN_EXIT_CODES.suspended;
  return RUN_EXIT_CODES.failed;
}

/** An error as the CLI shows it: its string form with `hint:` lines; the stack only with KEEL_DEBUG=1. */
export function describeError(error: unknown, debug: boolean): string {
  const text = formatConfigError(error);
  const stack = error instanceof Error ? error.stack : undefined;
  if (debug && stack) return `${text}\n${stack}`;
  // Keel's errors carry their own hint; anything else is unexpected, and its stack is what a bug report needs.
  return KeelError.isInstance(error) ? text : `${text}\nhint: Set KEEL_DEBUG=1 to print the stack trace.`;
}

/** An error a user acts on by its code: `code: message`, then a `hint:` line when it has one. */
export function describeDetails(details: Pick<ErrorDetails, "code" | "message" | "hint">): string {
  return `${details.code}: ${details.message}${details.hint ? `\nhint: ${details.hint}` : ""}`;
}

/**
 * Load the config's runtime, find the run and hand both to `use`, closing the runtime after. A run the store
 * does not know is printed as an error with its hint, exit 2.
 */
export async function withStoredRun(
  options: { configPath: string; runId: string; stderr: OutputStream },
  use: (runtime: Runtime, run: RunRecord) => Promise<number>,
): Promise<number> {
  const runtime = await Runtime.fromConfig(options.configPath);
  try {
    const run = await runtime.getRun(options.runId);
    if (run !== null) return await use(runtime, run);
    const error = new UnknownRunError(
      `Unknown run '${options.runId}': the config's session store has no such run`,
      {
        hint: "`keel runs <config>` lists the runs it knows",
      },
    );
    options.stderr.write(`${describeDetails(toErrorDetails(error))}\n`);
    return REFUSED_EXIT_CODE;
  } finally {
    await runtime.close();
  }
}

/** The result a stored run's last event carries, when that is its `run.finished`: only that event is read. */
export async function lastStoredResult(runtime: Runtime, run: RunRecord): Promise<RunResult | undefined> {
  if (run.lastSequence === 0) return undefined;
  const [last] = await runtime.sessionManager.loadEvents(run.runId, { afterSequence: run.lastSequence - 1 });
  return last?.kind === "run.finished" ? (last.payload.result as RunResult) : undefined;
}

/** What a stored run had cost when its last segment ended; undefined when the store does not say. */
export async function storedRunCost(runtime: Runtime, runId: string): Promise<number | null | undefined> {
  const run = await runtime.getRun(runId);
  return run === null ? undefined : (await lastStoredResult(runtime, run))?.usage.costUsd;
}

function jsonRenderer(stdout: OutputStream): (chunk: RunStreamChunk) => void {
  // RuntimeEvent has toJSON, so a chunk serialises as the camelCase chunk object `stream()` yields.
  return (chunk) => stdout.write(`${JSON.stringify(chunk)}\n`);
}

/**
 * The readable rendering: text as it streams, a line per tool call, a line per finished step with its duration,
 * tokens and cost, and a summary at the end.
 */
function readableRenderer(
  stdout: OutputStream,
  paint: Paint,
  timeline: RunTimeline,
): (chunk: RunStreamChunk) => void {
  // Assistant text arrives without line breaks between turns; a tool line must still start on its own line.
  let atLineStart = true;
  let steps = 0;
  const line = (text: string) => {
    stdout.write(`${atLineStart ? "" : "\n"}${text}\n`);
    atLineStart = true;
  };
  return (chunk) => {
    const payload = chunk.payload;
    const finishedStep = timeline.add(chunk);
    if (finishedStep !== undefined) line(paint("dim", stepLine(finishedStep)));
    switch (chunk.kind) {
      case "step.started":
        steps++;
        return;
      case "llm.delta": {
        const text = String(payload.text ?? "");
        if (text === "") return;
        stdout.write(text);
        atLineStart = text.endsWith("\n");
        return;
      }
      case "tool.started":
        line(
          `${paint("cyan", "→")} ${paint("bold", toolName(payload))} ${paint("dim", preview(payload.params))}`,
        );
        return;
      case "tool.finished":
        line(toolFinishedLine(payload, paint));
        return;
      case "tool.suspended":
        line(toolSuspendedLine(payload, paint));
        return;
      case "run.finished": {
        const result = chunk.result ?? (payload.result as RunResult | undefined);
        if (result) line(summaryLine(result, steps, paint));
        return;
      }
      default:
        return;
    }
  };
}

function toolName(payload: Record<string, unknown>): string {
  return String(payload.toolId ?? "tool");
}

function toolFinishedLine(payload: Record<string, unknown>, paint: Paint): string {
  const duration =
    typeof payload.durationMs === "number"
      ? ` ${paint("dim", `(${formatDuration(payload.durationMs)})`)}`
      : "";
  const name = paint("bold", toolName(payload));
  if (payload.ok === false || payload.error !== undefined) {
    return `${paint("red", "✗")} ${name} ${paint("red", preview(payload.error))}${duration}`;
  }
  return `${paint("green", "←")} ${name} ${preview(payload.result)}${duration}`;
}

function toolSuspendedLine(payload: Record<string, unknown>, paint: Paint): string {
  const reason = typeof payload.reason === "string" ? payload.reason : undefined;
  // The approval gate's own reason ("Tool 'x' requires approval") repeats the line; a tool's reason adds to it.
  const extra =
    reason && !/requires approval$/.test(reason) ? ` ${paint("dim", `(${preview(reason)})`)}` : "";
  return `${paint("yellow", "⏸")} ${paint("bold", toolName(payload))} awaiting approval ${paint("dim", preview(payload.params))}${extra}`;
}

/** `✓ completed · 3 steps · 3 llm calls · 2 tool calls · tokens 120 in / 40 out · cost $0 · run <id>`. */
function summaryLine(result: RunResult, countedSteps: number, paint: Paint): string {
  const usage = result.usage;
  const metadataSteps = result.metadata?.steps;
  const steps = typeof metadataSteps === "number" ? metadataSteps : countedSteps;
  const mark = result.stopReason === "completed" ? "✓" : result.stopReason === "suspended" ? "⏸" : "✗";
  const color =
    result.stopReason === "completed" ? "green" : result.stopReason === "suspended" ? "yellow" : "red";
  const parts = [
    plural(steps, "step"),
    plural(usage.llmCalls, "llm call"),
    plural(usage.toolCalls, "tool call"),
    `tokens ${usage.inputTokens} in / ${usage.outputTokens} out`,
    usage.costUsd === null ? "cost n/a" : `cost ${formatCost(usage.costUsd)}`,
    `run ${result.runId}`,
  ];
  return `${paint(color, `${mark} ${result.stopReason}`)} ${paint("dim", `· ${parts.join(" · ")}`)}`;
}

/** Where and how a run's problem is told: `hint` says how to decide a suspended run's calls. */
interface ProblemReport {
  stderr: OutputStream;
  debug: boolean;
  hint: (result: RunResult) => string;
}

/** A run that did not complete: its error with hint, or what it is waiting for and how to decide it. */
function reportProblem(result: RunResult, { stderr, debug, hint }: ProblemReport): void {
  if (result.exception) {
    stderr.write(`${describeError(result.exception, debug)}\n`);
    return;
  }
  if (result.errorDetails) {
    stderr.write(`${describeDetails(result.errorDetails)}\n`);
    return;
  }
  if (result.error) {
    stderr.write(`${result.error}\n`);
    return;
  }
  if (result.stopReason === "suspended") {
    const pending = result.pendingToolCalls.map((call) => `${call.toolId} (${call.toolCallId})`).join(", ");
    stderr.write(`The run is waiting for a decision on ${pending || "a tool call"}\n`);
    stderr.write(`hint: ${hint(result)}\n`);
  }
}

/** How to decide a suspended run's calls from another shell; a store that forgets the run says so instead. */
function decideHint(runtime: Runtime, configPath: string): (result: RunResult) => string {
  return (result) => {
    if (runtime.sessionManager instanceof InMemorySessionManager) {
      return (
        "the config's in_memory session store forgets the run when keel exits; with a jsonl_file, sqlite or " +
        "postgres store, `keel decide` approves or denies it later (on a terminal, keel run asks)"
      );
    }
    const call = result.pendingToolCalls[0]?.toolCallId ?? "<toolCallId>";
    const config = quoteArg(configPath);
    return (
      `decide each call with \`keel decide ${config} ${result.runId} ${call} approve\` (or deny, or result ` +
      `--value JSON); \`keel pending ${config} ${result.runId}\` lists them`
    );
  };
}

/** A path as a shell would need it: quoted only when it holds characters a shell treats specially. */
function quoteArg(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** `  step 2 · 412 ms · 1.2k in / 40 out · $0.0031`: what a finished step took. */
function stepLine(step: TimelineStep): string {
  const cost = step.costUsd === null ? "" : ` · ${formatCost(step.costUsd)}`;
  return `  step ${step.step} · ${formatDuration(step.durationMs)} · ${formatCount(step.inputTokens)} in / ${formatCount(step.outputTokens)} out${cost}`;
}

/** A value on one line: strings as they are, anything else as JSON, cut at {@link MAX_VALUE_CHARS}. */
function preview(value: unknown): string {
  return previewCut(value, MAX_VALUE_CHARS);
}
