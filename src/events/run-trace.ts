import type * as OtelApi from "@opentelemetry/api";
import { traceContextOfSpan } from "./active-trace-context.js";
import type { RunTraceContext, ToolSpanScope } from "./trace-context-carrier.js";

/**
 * One run segment being traced by the `otel_bridge` bus: from its `run.started` to its `run.finished`. Its open
 * `chat` span and its open `execute_tool` spans; it is also the scope in which the run's tool calls execute with
 * their spans active.
 */
export class RunTrace implements ToolSpanScope {
  provider: string | undefined = undefined;
  chat: OtelApi.Span | null = null;
  chatText = "";
  // A step nearly always has one tool call open at a time: it is kept in a slot, and only calls running beside
  // it go in a map, so a sequential run makes no map entry per call.
  private toolCallId: string | null = null;
  private toolSpan: OtelApi.Span | null = null;
  private others: Map<string, OtelApi.Span> | null = null;
  private carried: RunTraceContext | undefined;

  // biome-ignore lint/complexity/useMaxParams: made once per run segment by the bridge alone
  constructor(
    private readonly api: typeof OtelApi,
    readonly span: OtelApi.Span,
    /**
     * The context the segment's children start in (its span set in its parent's context), or null when its
     * span does not record — no SDK, or a sampler dropped it — and the segment makes no child spans.
     */
    readonly context: OtelApi.Context | null,
    /** The trace context of the run's first segment when this one resumes it. */
    stored: RunTraceContext | undefined,
    /** Whether a context manager is installed, so that making a span active is seen by code inside it. */
    private readonly activates: boolean,
  ) {
    this.carried = stored;
  }

  /** Whether the segment's span records, and so whether its events become spans and span events. */
  get recording(): boolean {
    return this.context !== null;
  }

  /** The trace context the run's checkpoints keep: its first segment's span, written out on first request. */
  runTraceContext(): RunTraceContext | undefined {
    if (this.carried === undefined) this.carried = this.contextOfSpan(this.span);
    return this.carried;
  }

  /** The trace context a tool call's own work belongs under: the call's span while it is open, else the run's. */
  toolTraceContext(toolCallId: string): RunTraceContext | undefined {
    const span = this.toolSpanOf(toolCallId);
    return span === undefined ? this.contextOfSpan(this.span) : this.contextOfSpan(span);
  }

  /** The scope for making tool spans active, when that is seen by anything. */
  get toolSpanScope(): ToolSpanScope | undefined {
    return this.activates && this.context !== null ? this : undefined;
  }

  inToolSpan<T>(toolCallId: string, execute: () => T): T {
    const span = this.toolSpanOf(toolCallId);
    if (span === undefined || this.context === null) return execute();
    const { api } = this;
    return api.context.with(api.trace.setSpan(this.context, span), execute);
  }

  addTool(toolCallId: string, span: OtelApi.Span): void {
    if (this.toolCallId === null) {
      this.toolCallId = toolCallId;
      this.toolSpan = span;
    } else {
      this.others ??= new Map();
      this.others.set(toolCallId, span);
    }
  }

  /** The open span of a call, taken out of the open ones. */
  takeTool(toolCallId: string): OtelApi.Span | undefined {
    if (this.toolCallId === toolCallId) {
      const span = this.toolSpan!;
      this.toolCallId = null;
      this.toolSpan = null;
      return span;
    }
    const span = this.others?.get(toolCallId);
    if (span !== undefined) this.others!.delete(toolCallId);
    return span;
  }

  /** End every span the segment still has open (not its own). */
  endOpen(): void {
    this.toolSpan?.end();
    this.toolSpan = null;
    this.toolCallId = null;
    if (this.others !== null) for (const span of this.others.values()) span.end();
    this.others = null;
    this.chat?.end();
    this.chat = null;
  }

  private toolSpanOf(toolCallId: string): OtelApi.Span | undefined {
    return this.toolCallId === toolCallId ? this.toolSpan! : this.others?.get(toolCallId);
  }

  private contextOfSpan(span: OtelApi.Span): RunTraceContext | undefined {
    const context = span.spanContext();
    return this.api.trace.isSpanContextValid(context) ? traceContextOfSpan(context) : undefined;
  }
}
