import type * as OtelApi from "@opentelemetry/api";
import type { ModelUsage } from "../contracts/language-model.js";
import type { RunResult } from "../contracts/run-types.js";
import type { EventBus, RuntimeEvent } from "../contracts/runtime-event.js";
import type { ErrorDetails } from "../errors/keel-error.js";
import { getLogger } from "../logging/logger.js";
import { traceContextOfSpan } from "./active-trace-context.js";
import { ForwardingEventBus } from "./forwarding-event-bus.js";
import {
  contentText,
  GEN_AI,
  genAiFinishReason,
  genAiProviderName,
  modelUsageAttributes,
  runUsageAttributes,
  type SpanAttributes,
} from "./gen-ai-attributes.js";
import type { RunTraceContext } from "./trace-context-carrier.js";

/** What {@link OtelBridgeEventBus} is made with: the loaded `@opentelemetry/api` and a tracer from it. */
export interface OtelBridgeParts {
  api: typeof OtelApi;
  tracer: OtelApi.Tracer;
  /** The bus every event is forwarded to first; subscriptions and history are its own. */
  inner: EventBus;
  /** Put prompts' answers, tool arguments and tool results on the spans. Default false. */
  captureContent?: boolean;
}

/** One run segment being traced: from its `run.started` to its `run.finished`. */
interface RunTrace {
  readonly span: OtelApi.Span;
  /** The context children of the segment's span start in. */
  readonly context: OtelApi.Context;
  /** The trace context of the run's first span, which every checkpoint of the run keeps. */
  readonly carried: RunTraceContext;
  provider: string | undefined;
  chat: OtelApi.Span | null;
  chatText: string;
  readonly tools: Map<string, OtelApi.Span>;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * An event bus (type `otel_bridge`) that forwards every event to an inner bus and turns each run's events into
 * OpenTelemetry spans named and attributed by the GenAI semantic conventions: `invoke_agent {agent}` per run
 * (one per segment when a run suspends and resumes), and beneath it `chat {model}` per model call and
 * `execute_tool {tool}` per tool call. Suspensions, decisions and resumes are span events; failures set the
 * span's status to ERROR with `error.type`. Content (answers, tool arguments and results) is recorded only with
 * `captureContent`. A new run whose `run.started` names a trace context (its request's, e.g. a host's
 * traceparent) is a child of that span. The run's trace context is kept in its checkpoints, so a run resumed in
 * another process continues the same trace. Tracing errors are logged and never reach the run.
 */
export class OtelBridgeEventBus extends ForwardingEventBus {
  private readonly api: typeof OtelApi;
  private readonly tracer: OtelApi.Tracer;
  private readonly captureContent: boolean;
  private readonly runs = new Map<string, RunTrace>();

  constructor(parts: OtelBridgeParts) {
    super(parts.inner);
    this.api = parts.api;
    this.tracer = parts.tracer;
    this.captureContent = parts.captureContent === true;
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
      for (const span of run.tools.values()) span.end();
      run.chat?.end();
      run.span.addEvent("keel.run.abandoned");
      run.span.end();
    }
    this.runs.clear();
    await this.inner.close();
  }

  override traceContextOf(runId: string): RunTraceContext | undefined {
    return this.runs.get(runId)?.carried;
  }

  private trace(event: RuntimeEvent): void {
    const kind = event.kind;
    if (kind === "run.started") {
      this.startRun(event);
      return;
    }
    const run = this.runs.get(event.runId);
    if (run === undefined) return;
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
        this.startTool(run, payload);
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
        this.finishRun(event.runId, run, payload.result as RunResult);
        break;
      default:
        break;
    }
  }

  private startRun(event: RuntimeEvent): void {
    const { api } = this;
    const payload = event.payload;
    const named = parseTraceContext(api, payload.traceContext);
    const stored = payload.resumed === true ? named : undefined;
    // A first segment joins the trace its caller named (a host in another process) or else the one active here;
    // a resumed one continues the run's own trace.
    const parent = named?.context ?? api.context.active();
    const attributes: SpanAttributes = {
      [GEN_AI.OPERATION_NAME]: "invoke_agent",
      [GEN_AI.AGENT_ID]: event.agentId,
      [GEN_AI.AGENT_NAME]: event.agentId,
      [GEN_AI.CONVERSATION_ID]: event.sessionId,
      "keel.run.id": event.runId,
    };
    if (payload.resumed === true) attributes["keel.run.resumed"] = true;
    const span = this.tracer.startSpan(
      `invoke_agent ${event.agentId}`,
      { kind: api.SpanKind.INTERNAL, attributes },
      parent,
    );
    if (payload.resumed === true) span.addEvent("keel.run.resumed");
    this.runs.get(event.runId)?.span.end();
    this.runs.set(event.runId, {
      span,
      context: api.trace.setSpan(parent, span),
      carried: stored?.carried ?? traceContextOfSpan(span.spanContext()),
      provider: undefined,
      chat: null,
      chatText: "",
      tools: new Map(),
    });
  }

  private startChat(run: RunTrace, payload: Record<string, unknown>): void {
    const model = String(payload.model);
    const provider = genAiProviderName(typeof payload.provider === "string" ? payload.provider : "_OTHER");
    if (run.provider === undefined) {
      run.provider = provider;
      run.span.setAttribute(GEN_AI.PROVIDER_NAME, provider);
    }
    run.chat?.end();
    run.chatText = "";
    run.chat = this.tracer.startSpan(
      `chat ${model}`,
      {
        kind: this.api.SpanKind.CLIENT,
        attributes: {
          [GEN_AI.OPERATION_NAME]: "chat",
          [GEN_AI.PROVIDER_NAME]: provider,
          [GEN_AI.REQUEST_MODEL]: model,
        },
      },
      run.context,
    );
  }

  private finishChat(run: RunTrace, payload: Record<string, unknown>): void {
    const span = run.chat;
    if (span === null) return;
    const attributes: SpanAttributes = { [GEN_AI.RESPONSE_MODEL]: String(payload.model) };
    if (payload.usage !== undefined) modelUsageAttributes(payload.usage as ModelUsage, attributes);
    const finish = typeof payload.stopReason === "string" ? genAiFinishReason(payload.stopReason) : undefined;
    if (finish !== undefined) attributes[GEN_AI.RESPONSE_FINISH_REASONS] = [finish];
    if (this.captureContent && run.chatText !== "") {
      attributes[GEN_AI.OUTPUT_MESSAGES] = JSON.stringify([
        { role: "assistant", parts: [{ type: "text", content: run.chatText }], finish_reason: finish },
      ]);
    }
    span.setAttributes(attributes);
    span.end();
    run.chat = null;
    run.chatText = "";
  }

  private startTool(run: RunTrace, payload: Record<string, unknown>): void {
    const name = String(payload.toolId);
    const callId = String(payload.toolCallId);
    const attributes: SpanAttributes = {
      [GEN_AI.OPERATION_NAME]: "execute_tool",
      [GEN_AI.TOOL_NAME]: name,
      [GEN_AI.TOOL_CALL_ID]: callId,
      [GEN_AI.TOOL_TYPE]: "function",
    };
    if (this.captureContent) attributes[GEN_AI.TOOL_CALL_ARGUMENTS] = contentText(payload.params);
    const span = this.tracer.startSpan(
      `execute_tool ${name}`,
      { kind: this.api.SpanKind.INTERNAL, attributes },
      run.context,
    );
    run.tools.set(callId, span);
  }

  private finishTool(run: RunTrace, payload: Record<string, unknown>, failed: boolean): void {
    const callId = String(payload.toolCallId);
    let span = run.tools.get(callId);
    // A call refused at its gate fails without having started: its span is made here, already over.
    if (span === undefined) {
      this.startTool(run, payload);
      span = run.tools.get(callId)!;
    }
    run.tools.delete(callId);
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
    const callId = String(payload.toolCallId);
    const span = run.tools.get(callId);
    if (span === undefined) return;
    run.tools.delete(callId);
    span.addEvent("keel.tool.suspended", attributes);
    span.end();
  }

  private finishRun(runId: string, run: RunTrace, result: RunResult | undefined): void {
    this.runs.delete(runId);
    for (const span of run.tools.values()) span.end();
    run.chat?.end();
    const span = run.span;
    if (result !== undefined) {
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
    span.end();
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
