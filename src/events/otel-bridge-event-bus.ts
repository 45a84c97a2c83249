import type * as OtelApi from "@opentelemetry/api";
import type { RunResult } from "../contracts/run-types.js";
import type { EventBus, RuntimeEvent } from "../contracts/runtime-event.js";
import type { ErrorDetails } from "../errors/keel-error.js";
import { getLogger } from "../logging/logger.js";
import { ForwardingEventBus } from "./forwarding-event-bus.js";
import {
  contentText,
  GEN_AI,
  genAiFinishReason,
  genAiFinishReasons,
  genAiProviderName,
  runUsageAttributes,
  type SpanAttributes,
  setModelUsageAttributes,
} from "./gen-ai-attributes.js";
import { RunTrace } from "./run-trace.js";
import type { RunTraceContext, ToolSpanScope } from "./trace-context-carrier.js";

/** What {@link OtelBridgeEventBus} is made with: the loaded `@opentelemetry/api` and a tracer from it. */
export interface OtelBridgeParts {
  api: typeof OtelApi;
  tracer: OtelApi.Tracer;
  /** The bus every event is forwarded to first; subscriptions and history are its own. */
  inner: EventBus;
  /** Put prompts' answers, tool arguments and tool results on the spans. Default false. */
  captureContent?: boolean;
}

/** The name and start options of the `chat` spans of one model, made once and reused for every call. */
interface ChatShape {
  readonly model: string;
  readonly rawProvider: unknown;
  readonly provider: string;
  readonly name: string;
  readonly options: OtelApi.SpanOptions;
}

/** The name and start options of one tool's `execute_tool` spans (the call id is set on each span). */
interface ToolShape {
  readonly name: string;
  readonly options: OtelApi.SpanOptions;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
// Bounds of the per-tool and per-agent caches: a runtime has a handful of each; past that, names are made anew.
const SHAPE_CACHE_LIMIT = 256;

/**
 * An event bus (type `otel_bridge`) that forwards every event to an inner bus and turns each run's events into
 * OpenTelemetry spans named and attributed by the GenAI semantic conventions: `invoke_agent {agent}` per run
 * (one per segment when a run suspends and resumes), and beneath it `chat {model}` per model call and
 * `execute_tool {tool}` per tool call. Suspensions, decisions and resumes are span events; failures set the
 * span's status to ERROR with `error.type`. Content (answers, tool arguments and results) is recorded only with
 * `captureContent`. A new run whose `run.started` names a trace context (its request's, e.g. a host's
 * traceparent) is a child of that span. The run's trace context is kept in its checkpoints, so a run resumed in
 * another process continues the same trace. A run whose span does not record (no SDK installed, or sampled
 * out) makes no other span: its events cost one lookup each. Tracing errors are logged and never reach the run.
 */
export class OtelBridgeEventBus extends ForwardingEventBus {
  private readonly api: typeof OtelApi;
  private readonly tracer: OtelApi.Tracer;
  private readonly captureContent: boolean;
  private readonly runs = new Map<string, RunTrace>();
  // The run the last event belonged to: a run's events come in a row, so most need no map lookup.
  private lastRunId = "";
  private lastRun: RunTrace | undefined = undefined;
  private chatShape: ChatShape | null = null;
  private readonly toolShapes = new Map<string, ToolShape>();
  private readonly runSpanNames = new Map<string, string>();
  private readonly internal: OtelApi.SpanKind;
  private readonly client: OtelApi.SpanKind;
  private readonly probeKey: symbol;

  constructor(parts: OtelBridgeParts) {
    super(parts.inner);
    this.api = parts.api;
    this.tracer = parts.tracer;
    this.captureContent = parts.captureContent === true;
    this.internal = parts.api.SpanKind.INTERNAL;
    this.client = parts.api.SpanKind.CLIENT;
    this.probeKey = parts.api.createContextKey("keel.otel_bridge.probe");
  }

  /** Forward to the inner bus, then move the run's spans along. */
  publish(event: RuntimeEvent): void {
    this.inner.publish(event);
    if (event.runId === "") return;
    try {
      this.trace(event);
    } catch (error) {
      getLogger().warn(`otel_bridge: event "${event.kind}" of run ${event.runId} was not traced`, { error });
    }
  }

  /** End the spans of runs still open (their process is going away), then close the inner bus. */
  override async close(): Promise<void> {
    for (const run of this.runs.values()) {
      run.endOpen();
      run.span.addEvent("keel.run.abandoned");
      run.span.end();
    }
    this.runs.clear();
    this.lastRun = undefined;
    await this.inner.close();
  }

  override traceContextOf(runId: string, toolCallId?: string): RunTraceContext | undefined {
    const run = this.runs.get(runId);
    if (run === undefined) return undefined;
    return toolCallId === undefined ? run.runTraceContext() : run.toolTraceContext(toolCallId);
  }

  override toolSpanScope(runId: string): ToolSpanScope | undefined {
    return this.runs.get(runId)?.toolSpanScope;
  }

  private trace(event: RuntimeEvent): void {
    const kind = event.kind;
    if (kind === "run.started") {
      this.startRun(event);
      return;
    }
    let run = this.lastRun;
    if (run === undefined || this.lastRunId !== event.runId) {
      run = this.runs.get(event.runId);
      if (run === undefined) return;
      this.lastRunId = event.runId;
      this.lastRun = run;
    }
    if (!run.recording) {
      if (kind === "run.finished") this.endRun(event.runId, run);
      return;
    }
    const payload = event.payload;
    switch (kind) {
      case "llm.called":
        this.startChat(run, payload);
        break;
      case "llm.delta":
        if (this.captureContent && run.chat !== null) run.chatText += String(payload.text ?? "");
        break;
      case "llm.finished":
        this.finishChat(run, payload);
        break;
      case "llm.failed":
        if (run.chat !== null) this.fail(run.chat, payload.error, payload.errorDetails);
        run.chat?.end();
        run.chat = null;
        break;
      case "tool.started":
        run.addTool(String(payload.toolCallId), this.startTool(run, payload));
        break;
      case "tool.completed":
      case "tool.failed":
        this.finishTool(run, payload, kind === "tool.failed");
        break;
      case "tool.suspended":
        this.suspendTool(run, payload);
        break;
      case "tool.decision":
        run.span.addEvent("keel.tool.decision", {
          [GEN_AI.TOOL_NAME]: String(payload.toolId),
          [GEN_AI.TOOL_CALL_ID]: String(payload.toolCallId),
          "keel.decision.action": String(payload.action),
        });
        break;
      case "run.resume_attempted":
      case "run.resume_succeeded":
        run.span.addEvent(`keel.${kind}`, { "keel.resume.attempt": Number(payload.attempt) });
        break;
      case "run.failed":
        this.fail(run.span, payload.error, payload.errorDetails);
        break;
      case "run.cancelled":
        run.span.addEvent(
          "keel.run.cancelled",
          payload.reason === undefined ? {} : { reason: String(payload.reason) },
        );
        break;
      case "run.finished":
        this.finishRun(run, payload.result as RunResult | undefined);
        this.endRun(event.runId, run);
        break;
      default:
        break;
    }
  }

  private startRun(event: RuntimeEvent): void {
    const { api } = this;
    const payload = event.payload;
    const named = parseTraceContext(api, payload.traceContext);
    const resumed = payload.resumed === true;
    // A first segment joins the trace its caller named (a host in another process, a parent run's tool call)
    // or else the one active here; a resumed one continues the run's own trace.
    const parent = named?.context ?? api.context.active();
    const attributes: SpanAttributes = {
      [GEN_AI.OPERATION_NAME]: "invoke_agent",
      [GEN_AI.AGENT_ID]: event.agentId,
      [GEN_AI.AGENT_NAME]: event.agentId,
      [GEN_AI.CONVERSATION_ID]: event.sessionId,
      "keel.run.id": event.runId,
    };
    if (resumed) attributes["keel.run.resumed"] = true;
    const span = this.tracer.startSpan(
      this.runSpanName(event.agentId),
      { kind: this.internal, attributes },
      parent,
    );
    const recording = span.isRecording();
    if (resumed && recording) span.addEvent("keel.run.resumed");
    const previous = this.runs.get(event.runId);
    if (previous !== undefined) {
      previous.endOpen();
      previous.span.end();
    }
    const run = new RunTrace(
      api,
      span,
      recording ? api.trace.setSpan(parent, span) : null,
      resumed ? named?.carried : undefined,
      recording && this.contextManagerInstalled(),
    );
    this.runs.set(event.runId, run);
    this.lastRunId = event.runId;
    this.lastRun = run;
  }

  /** Whether `context.with` is seen by `context.active()`: false while only the API's no-op manager is there. */
  private contextManagerInstalled(): boolean {
    const { api } = this;
    const probe = api.ROOT_CONTEXT.setValue(this.probeKey, true);
    return api.context.with(probe, () => api.context.active() === probe);
  }

  private endRun(runId: string, run: RunTrace): void {
    this.runs.delete(runId);
    if (this.lastRun === run) this.lastRun = undefined;
    run.endOpen();
    run.span.end();
  }

  private runSpanName(agentId: string): string {
    let name = this.runSpanNames.get(agentId);
    if (name === undefined) {
      name = `invoke_agent ${agentId}`;
      if (this.runSpanNames.size < SHAPE_CACHE_LIMIT) this.runSpanNames.set(agentId, name);
    }
    return name;
  }

  private startChat(run: RunTrace, payload: Record<string, unknown>): void {
    const shape = this.chatShapeOf(payload.model, payload.provider);
    if (run.provider === undefined) {
      run.provider = shape.provider;
      run.span.setAttribute(GEN_AI.PROVIDER_NAME, shape.provider);
    }
    run.chat?.end();
    run.chatText = "";
    run.chat = this.tracer.startSpan(shape.name, shape.options, run.context!);
  }

  /** The last model's chat shape when this call is to the same model, else a new one (kept as the last). */
  private chatShapeOf(model: unknown, rawProvider: unknown): ChatShape {
    const last = this.chatShape;
    if (last !== null && last.model === model && last.rawProvider === rawProvider) return last;
    const modelName = String(model);
    const provider = genAiProviderName(typeof rawProvider === "string" ? rawProvider : "_OTHER");
    const shape: ChatShape = {
      model: modelName,
      rawProvider,
      provider,
      name: `chat ${modelName}`,
      options: {
        kind: this.client,
        attributes: Object.freeze({
          [GEN_AI.OPERATION_NAME]: "chat",
          [GEN_AI.PROVIDER_NAME]: provider,
          [GEN_AI.REQUEST_MODEL]: modelName,
        }),
      },
    };
    this.chatShape = shape;
    return shape;
  }

  private finishChat(run: RunTrace, payload: Record<string, unknown>): void {
    const span = run.chat;
    if (span === null) return;
    span.setAttribute(GEN_AI.RESPONSE_MODEL, String(payload.model));
    if (payload.usage !== undefined) setModelUsageAttributes(span, payload.usage as never);
    const stopReason = payload.stopReason;
    if (typeof stopReason === "string")
      span.setAttribute(GEN_AI.RESPONSE_FINISH_REASONS, genAiFinishReasons(stopReason) as string[]);
    if (this.captureContent && run.chatText !== "") {
      const finish = typeof stopReason === "string" ? genAiFinishReason(stopReason) : undefined;
      span.setAttribute(
        GEN_AI.OUTPUT_MESSAGES,
        JSON.stringify([
          { role: "assistant", parts: [{ type: "text", content: run.chatText }], finish_reason: finish },
        ]),
      );
    }
    span.end();
    run.chat = null;
    run.chatText = "";
  }

  /** A tool call's span, started (the caller keeps it open). */
  private startTool(run: RunTrace, payload: Record<string, unknown>): OtelApi.Span {
    const shape = this.toolShapeOf(String(payload.toolId));
    const span = this.tracer.startSpan(shape.name, shape.options, run.context!);
    span.setAttribute(GEN_AI.TOOL_CALL_ID, String(payload.toolCallId));
    if (this.captureContent) span.setAttribute(GEN_AI.TOOL_CALL_ARGUMENTS, contentText(payload.params));
    return span;
  }

  private toolShapeOf(toolId: string): ToolShape {
    let shape = this.toolShapes.get(toolId);
    if (shape === undefined) {
      shape = {
        name: `execute_tool ${toolId}`,
        options: {
          kind: this.internal,
          attributes: Object.freeze({
            [GEN_AI.OPERATION_NAME]: "execute_tool",
            [GEN_AI.TOOL_NAME]: toolId,
            [GEN_AI.TOOL_TYPE]: "function",
          }),
        },
      };
      if (this.toolShapes.size < SHAPE_CACHE_LIMIT) this.toolShapes.set(toolId, shape);
    }
    return shape;
  }

  private finishTool(run: RunTrace, payload: Record<string, unknown>, failed: boolean): void {
    // A call refused at its gate fails without having started: its span is made here, already over.
    const span = run.takeTool(String(payload.toolCallId)) ?? this.startTool(run, payload);
    if (failed) {
      const code = typeof payload.code === "string" ? payload.code : undefined;
      this.fail(span, payload.error, code === undefined ? undefined : { code });
      if (typeof payload.rule === "string") span.setAttribute("keel.tool.rule", payload.rule);
    } else if (this.captureContent) {
      span.setAttribute(GEN_AI.TOOL_CALL_RESULT, contentText(payload.result));
    }
    span.end();
  }

  private suspendTool(run: RunTrace, payload: Record<string, unknown>): void {
    const attributes: SpanAttributes = {
      [GEN_AI.TOOL_NAME]: String(payload.toolId),
      [GEN_AI.TOOL_CALL_ID]: String(payload.toolCallId),
    };
    if (typeof payload.reason === "string") attributes["keel.suspension.reason"] = payload.reason;
    run.span.addEvent("keel.tool.suspended", attributes);
    const span = run.takeTool(String(payload.toolCallId));
    if (span === undefined) return;
    span.addEvent("keel.tool.suspended", attributes);
    span.end();
  }

  /** The run's totals, outcome and (on request) final output on its span, which the caller ends. */
  private finishRun(run: RunTrace, result: RunResult | undefined): void {
    if (result === undefined) return;
    const span = run.span;
    const attributes: SpanAttributes = { "keel.run.stop_reason": result.stopReason };
    runUsageAttributes(result.usage, attributes);
    if (this.captureContent && result.finalOutput !== null && result.finalOutput !== undefined) {
      attributes[GEN_AI.OUTPUT_MESSAGES] = JSON.stringify([
        { role: "assistant", parts: [{ type: "text", content: contentText(result.finalOutput) }] },
      ]);
    }
    span.setAttributes(attributes);
    if (result.stopReason === "suspended") {
      span.addEvent("keel.run.suspended", {
        "keel.run.pending_tool_call_ids": result.pendingToolCalls.map((call) => call.toolCallId),
      });
    }
  }

  /** Status ERROR with the message, `error.type` from the error's code, and an `exception` event. */
  private fail(span: OtelApi.Span, error: unknown, details: unknown): void {
    const code = (details as Partial<ErrorDetails> | undefined)?.code;
    const type = typeof code === "string" && code !== "" ? code : "_OTHER";
    const message = typeof error === "string" ? error : String(error ?? "");
    span.setAttribute(GEN_AI.ERROR_TYPE, type);
    span.addEvent("exception", { "exception.type": type, "exception.message": message });
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message });
  }
}

/** A stored trace context as a remote parent, or undefined when there is none or it is malformed. */
function parseTraceContext(
  api: typeof OtelApi,
  value: unknown,
): { context: OtelApi.Context; carried: RunTraceContext } | undefined {
  const carried = value as Partial<RunTraceContext> | undefined;
  if (typeof carried?.traceparent !== "string") return undefined;
  const match = TRACEPARENT.exec(carried.traceparent);
  if (match === null) return undefined;
  const spanContext: OtelApi.SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16),
    isRemote: true,
  };
  if (typeof carried.tracestate === "string")
    spanContext.traceState = api.createTraceState(carried.tracestate);
  return {
    context: api.trace.setSpanContext(api.ROOT_CONTEXT, spanContext),
    carried: carried as RunTraceContext,
  };
}
