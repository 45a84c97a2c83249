import type { RunResult, RunUsage } from "../../contracts/run-types.js";

/** An event as the timeline reads it: a stored event or a stream chunk (whose finished tool calls are `tool.finished`). */
export interface TimelineEvent {
  readonly kind: string;
  readonly timestampMs: number;
  readonly payload: Record<string, unknown>;
}

/** What a model call or a step used: tokens, and the cost when the model's price is known (else null). */
export interface TimelineUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
}

interface Span {
  /** Milliseconds from the run's start, with the time it waited for decisions left out. */
  startMs: number;
  endMs: number;
  /** What the call itself measured, when it did (finer than the events' millisecond stamps). */
  durationMs: number;
}

export interface TimelineModelCall extends Span, TimelineUsage {
  kind: "model";
  step: number;
  model: string;
  stopReason?: string;
  error?: string;
  /** Set once the call has answered or failed. */
  done: boolean;
}

export interface TimelineToolCall extends Span {
  kind: "tool";
  step: number;
  toolId: string;
  toolCallId: string;
  params: unknown;
  /** `ok`, `failed`, `suspended`, or `running` for a call without an outcome in the log. */
  outcome: "ok" | "failed" | "suspended" | "running";
  result?: unknown;
  error?: string;
}

/** Something that happened at one instant: a suspension, a decision, the wait for it, a resume, an error. */
export interface TimelineMark {
  kind: "mark";
  step: number;
  atMs: number;
  mark: "suspended" | "decision" | "waited" | "resumed" | "failed" | "cancelled" | "retry";
  text: string;
  hint?: string;
  /** For `waited`: how long the run waited, which the time axis leaves out. */
  waitedMs?: number;
}

export interface TimelineStep extends Span, TimelineUsage {
  kind: "step";
  step: number;
  /** Whether the step reached its end (a suspended or failed step may not). */
  finished: boolean;
}

export type TimelineItem = TimelineStep | TimelineModelCall | TimelineToolCall | TimelineMark;

/** A run's events folded into what a timeline shows, in the order they happened. */
export interface RunTimelineView {
  /** Milliseconds the run was active (waits for decisions left out). */
  activeMs: number;
  /** Milliseconds from its first event to its last, waits included. */
  elapsedMs: number;
  steps: number;
  items: TimelineItem[];
  result?: RunResult;
}

/**
 * Folds a run's events, one at a time, into a timeline: steps, model calls with tokens and cost, tool calls,
 * suspensions, decisions and errors, on a time axis from the run's start that leaves out the time it waited
 * for decisions (that wait is one `waited` mark). `keel trace` feeds it a stored log; `keel run` feeds it the
 * stream as it comes, for a line per step.
 */
export class RunTimeline {
  readonly items: TimelineItem[] = [];
  result: RunResult | undefined;
  private origin: number | null = null;
  private lastAt = 0;
  /** Time left out of the axis so far: the waits between a run's segments. */
  private waited = 0;
  private finishedAt: number | null = null;
  private step: TimelineStep | null = null;
  private stepCount = 0;
  private model: TimelineModelCall | null = null;
  private readonly tools = new Map<string, TimelineToolCall>();
  /** The run's cost so far, when known: a stream of a resumed run starts without it. */
  private cost: number | null | undefined = undefined;

  /** `costSoFar`: what the run had cost before these events, when they continue it (undefined: not known). */
  constructor(options: { costSoFar?: number | null | undefined } = {}) {
    this.cost = options.costSoFar;
  }

  /** Add the next event; returns the step it finished, if it finished one. */
  add(event: TimelineEvent): TimelineStep | undefined {
    const at = this.at(event);
    const payload = event.payload;
    switch (event.kind) {
      case "run.started":
        if (payload.resumed === true) this.mark(at, "resumed", "resumed");
        else this.cost = 0;
        return undefined;
      case "step.started":
        return this.startStep(payload, at);
      case "step.finished":
        return this.finishStep(at);
      case "llm.called":
        this.model = this.push({
          ...this.span(at),
          kind: "model",
          step: this.stepCount,
          model: String(payload.model),
          inputTokens: 0,
          outputTokens: 0,
          costUsd: null,
          done: false,
        });
        return undefined;
      case "llm.finished":
        this.finishModel(payload, at);
        return undefined;
      case "llm.failed":
        if (this.model !== null)
          Object.assign(this.model, { endMs: at, error: String(payload.error), done: true });
        this.model = null;
        return undefined;
      case "usage.updated":
        this.updateUsage(payload.usage as RunUsage | undefined);
        return undefined;
      case "tool.started":
        this.startTool(payload, at);
        return undefined;
      case "tool.completed":
      case "tool.failed":
      case "tool.finished":
        this.finishTool(payload, at, event.kind === "tool.failed" || payload.ok === false);
        return undefined;
      case "tool.suspended":
        this.suspendTool(payload, at);
        return undefined;
      case "tool.decision": {
        const reason = typeof payload.reason === "string" ? ` (${payload.reason})` : "";
        this.mark(at, "decision", `${payload.action} ${payload.toolId} (${payload.toolCallId})${reason}`);
        return undefined;
      }
      case "run.resume_attempted":
        this.mark(
          at,
          "retry",
          `retry from a checkpoint, attempt ${payload.attempt} after ${payload.errorCode}`,
        );
        return undefined;
      case "run.failed": {
        const details = payload.errorDetails as { code?: string; hint?: string } | undefined;
        const mark = this.mark(at, "failed", `${details?.code ? `${details.code}: ` : ""}${payload.error}`);
        if (details?.hint) mark.hint = details.hint;
        return undefined;
      }
      case "run.cancelled":
        this.mark(at, "cancelled", `cancelled${payload.reason ? `: ${payload.reason}` : ""}`);
        return undefined;
      case "run.finished":
        this.result = payload.result as RunResult | undefined;
        this.finishedAt = event.timestampMs;
        this.model = null;
        this.step = null;
        return undefined;
      default:
        return undefined;
    }
  }

  /** The timeline so far. */
  view(): RunTimelineView {
    const view: RunTimelineView = {
      activeMs: this.lastAt,
      elapsedMs: this.lastAt + this.waited,
      steps: this.stepCount,
      items: this.items,
    };
    if (this.result !== undefined) view.result = this.result;
    return view;
  }

  /** The event's time on the axis; a run segment that starts after a finished one adds a `waited` mark. */
  private at(event: TimelineEvent): number {
    const stamp = event.timestampMs;
    if (this.origin === null) this.origin = stamp;
    if (event.kind === "run.started" && this.finishedAt !== null) {
      const gap = Math.max(0, stamp - this.finishedAt);
      this.finishedAt = null;
      this.mark(this.lastAt, "waited", "waited for a decision").waitedMs = gap;
      this.waited += gap;
    }
    this.lastAt = Math.max(this.lastAt, stamp - this.origin - this.waited);
    return this.lastAt;
  }

  private span(at: number): Span {
    return { startMs: at, endMs: at, durationMs: 0 };
  }

  private push<T extends TimelineItem>(item: T): T {
    this.items.push(item);
    return item;
  }

  private mark(at: number, mark: TimelineMark["mark"], text: string): TimelineMark {
    return this.push({ kind: "mark", step: this.stepCount, atMs: at, mark, text });
  }

  private startStep(payload: Record<string, unknown>, at: number): undefined {
    this.stepCount = Number(payload.step);
    this.step = this.push({
      ...this.span(at),
      kind: "step",
      step: this.stepCount,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: this.cost === undefined ? null : 0,
      finished: false,
    });
    return undefined;
  }

  private finishStep(at: number): TimelineStep | undefined {
    const step = this.step;
    if (step === null) return undefined;
    step.endMs = at;
    step.durationMs = at - step.startMs;
    step.finished = true;
    this.step = null;
    return step;
  }

  private finishModel(payload: Record<string, unknown>, at: number): void {
    const call = this.model;
    if (call === null) return;
    const usage = payload.usage as { inputTokens?: number; outputTokens?: number } | undefined;
    call.endMs = at;
    call.durationMs = typeof payload.durationMs === "number" ? payload.durationMs : at - call.startMs;
    call.model = String(payload.model ?? call.model);
    call.inputTokens = usage?.inputTokens ?? 0;
    call.outputTokens = usage?.outputTokens ?? 0;
    if (typeof payload.stopReason === "string") call.stopReason = payload.stopReason;
    call.done = true;
    const step = this.step;
    if (step !== null) {
      step.inputTokens += call.inputTokens;
      step.outputTokens += call.outputTokens;
    }
  }

  /** The run's totals after a model call: the call's cost is what they grew by, when the earlier total is known. */
  private updateUsage(usage: RunUsage | undefined): void {
    if (usage === undefined) return;
    const total = usage.costUsd;
    const before = this.cost;
    this.cost = total;
    if (total === null || before === null || before === undefined) {
      if (this.step !== null) this.step.costUsd = null;
      return;
    }
    const call = this.items.findLast((item): item is TimelineModelCall => item.kind === "model");
    if (call !== undefined) call.costUsd = total - before;
    if (this.step !== null && this.step.costUsd !== null) this.step.costUsd += total - before;
  }

  private startTool(payload: Record<string, unknown>, at: number): void {
    const call = this.push({
      ...this.span(at),
      kind: "tool",
      step: this.stepCount,
      toolId: String(payload.toolId),
      toolCallId: String(payload.toolCallId),
      params: payload.params,
      outcome: "running",
    } satisfies TimelineToolCall);
    this.tools.set(call.toolCallId, call);
  }

  private finishTool(payload: Record<string, unknown>, at: number, failed: boolean): void {
    const id = String(payload.toolCallId);
    let call = this.tools.get(id);
    // A call refused at its gate fails without having started.
    if (call === undefined) {
      this.startTool(payload, at);
      call = this.tools.get(id)!;
    }
    this.tools.delete(id);
    call.endMs = at;
    call.durationMs = typeof payload.durationMs === "number" ? payload.durationMs : at - call.startMs;
    call.outcome = failed ? "failed" : "ok";
    if (failed) call.error = String(payload.error);
    else call.result = payload.result;
  }

  private suspendTool(payload: Record<string, unknown>, at: number): void {
    const id = String(payload.toolCallId);
    const call = this.tools.get(id);
    if (call !== undefined) {
      this.tools.delete(id);
      Object.assign(call, { endMs: at, durationMs: at - call.startMs, outcome: "suspended" });
    }
    const reason = typeof payload.reason === "string" ? `: ${payload.reason}` : "";
    this.mark(at, "suspended", `${payload.toolId} (${id}) awaits a decision${reason}`);
  }
}
