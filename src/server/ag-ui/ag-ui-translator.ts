import type { RunResult, RunUsage } from "../../contracts/run-types.js";
import type { RunStreamChunk } from "../../runtime/stream-chunk.js";
import { toInterrupt } from "./ag-ui-interrupts.js";
import type { AgUiEvent, AgUiProfile } from "./ag-ui-types.js";

export interface AgUiTranslatorOptions {
  readonly profile: AgUiProfile;
  /** The AG-UI thread and run every lifecycle event names: the client's, not Keel's. */
  readonly threadId: string;
  readonly runId: string;
  readonly parentRunId?: string | undefined;
}

/**
 * Turns one Keel run stream into one AG-UI run: RUN_STARTED, then text, reasoning, steps and tool calls, then
 * RUN_FINISHED (success, interrupt, or cancelled in 1.0) or RUN_ERROR. The client refuses RUN_FINISHED while a
 * message, tool call or step is open, so every construct is closed before the run's last event. Message ids come
 * from the Keel run id and the opening chunk's sequence: the same run translates to the same ids, which lets a
 * replay land on the messages a client already holds.
 */
export class AgUiTranslator {
  private started = false;
  private ended = false;
  private text: string | undefined;
  private reasoning: string | undefined;
  private readonly steps = new Set<string>();
  /** The assistant message a step's text and tool calls belong to. */
  private stepMessage: string | undefined;
  private stepMessageHasText = false;
  /** Calls whose START/ARGS/END this client has seen: in this stream, or in the run a decision answers. */
  private readonly announced = new Set<string>();
  private failure: { message: string; code?: string | undefined } | undefined;

  constructor(private readonly options: AgUiTranslatorOptions) {}

  /** Whether the run's last event (RUN_FINISHED or RUN_ERROR) was produced. */
  get finished(): boolean {
    return this.ended;
  }

  /** RUN_STARTED, once. */
  start(timestamp?: number): AgUiEvent[] {
    if (this.started) return [];
    this.started = true;
    const { threadId, runId, parentRunId } = this.options;
    return [
      stamp(
        {
          type: "RUN_STARTED",
          threadId,
          runId,
          ...(parentRunId === undefined ? {} : { parentRunId }),
          ...(this.options.profile === "1.0" ? { protocolVersion: "1.0" } : {}),
        },
        timestamp,
      ),
    ];
  }

  /** The events one chunk becomes; none once the run has ended. */
  push(chunk: RunStreamChunk): AgUiEvent[] {
    if (this.ended) return [];
    const out = this.start(chunk.timestampMs);
    const at = chunk.timestampMs;
    const id = `${chunk.runId}:${chunk.sequence}`;
    switch (chunk.kind) {
      case "step.started": {
        this.closeContent(out, at);
        this.stepMessage = undefined;
        this.stepMessageHasText = false;
        const stepName = `step ${chunk.payload.step}`;
        // A resumed run re-enters the step it suspended in; the step is still open here only if this stream saw it.
        if (!this.steps.has(stepName)) {
          this.steps.add(stepName);
          out.push(stamp({ type: "STEP_STARTED", stepName }, at));
        }
        break;
      }
      case "step.finished": {
        this.closeContent(out, at);
        const stepName = `step ${chunk.payload.step}`;
        if (this.steps.delete(stepName)) out.push(stamp({ type: "STEP_FINISHED", stepName }, at));
        break;
      }
      case "llm.delta": {
        this.closeReasoning(out, at);
        if (this.text === undefined) {
          // The step's first text is its assistant message (which its tool calls name); later text is a new one.
          this.text = this.stepMessage === undefined || this.stepMessageHasText ? id : this.stepMessage;
          this.stepMessage ??= this.text;
          this.stepMessageHasText = true;
          out.push(stamp({ type: "TEXT_MESSAGE_START", messageId: this.text, role: "assistant" }, at));
        }
        out.push(
          stamp({ type: "TEXT_MESSAGE_CONTENT", messageId: this.text, delta: chunk.payload.text }, at),
        );
        break;
      }
      case "llm.reasoning": {
        this.closeText(out, at);
        if (this.reasoning === undefined) {
          this.reasoning = `${id}:reasoning`;
          out.push(stamp({ type: "REASONING_START", messageId: this.reasoning }, at));
          out.push(
            stamp({ type: "REASONING_MESSAGE_START", messageId: this.reasoning, role: "reasoning" }, at),
          );
        }
        out.push(
          stamp(
            { type: "REASONING_MESSAGE_CONTENT", messageId: this.reasoning, delta: chunk.payload.text },
            at,
          ),
        );
        break;
      }
      case "tool.decision":
        // The call was announced in the run that paused; its replay must not add a second copy of it.
        this.announced.add(chunk.payload.toolCallId);
        break;
      case "tool.started":
      case "tool.suspended":
        this.closeContent(out, at);
        this.announce(
          out,
          {
            toolCallId: chunk.payload.toolCallId,
            toolName: chunk.payload.toolId,
            params: chunk.payload.params,
          },
          { id, at },
        );
        break;
      case "tool.finished": {
        this.closeContent(out, at);
        const { toolCallId, toolId } = chunk.payload;
        this.announce(out, { toolCallId, toolName: toolId }, { id, at });
        const content =
          chunk.payload.ok === false
            ? JSON.stringify({ error: chunk.payload.error, ...codeOf(chunk.payload.code) })
            : resultText(chunk.payload.result);
        out.push(
          stamp(
            { type: "TOOL_CALL_RESULT", messageId: `${id}:result`, toolCallId, content, role: "tool" },
            at,
          ),
        );
        break;
      }
      case "run.failed":
        this.failure = { message: chunk.payload.error, code: chunk.payload.errorDetails?.code };
        break;
      case "run.finished":
        this.finish(out, chunk.result, at);
        break;
      default:
        // Keel's other events (usage, checkpoints, memory, custom ones) have no AG-UI counterpart a client needs.
        break;
    }
    return out;
  }

  /**
   * The end of a stream that stopped without `run.finished` (it threw, or the run could not be read on): open
   * constructs closed, then RUN_ERROR. Nothing when the run already ended.
   */
  abort(message: string, code = "stream_interrupted"): AgUiEvent[] {
    if (this.ended) return [];
    const out = this.start();
    this.closeAll(out, undefined);
    this.ended = true;
    out.push(stamp({ type: "RUN_ERROR", message, code }, undefined));
    return out;
  }

  private finish(out: AgUiEvent[], result: RunResult, at: number): void {
    this.closeAll(out, at);
    this.ended = true;
    const { threadId, runId } = this.options;
    const usage = usageOf(result.usage);
    switch (result.stopReason) {
      case "completed":
        out.push(
          stamp(
            {
              type: "RUN_FINISHED",
              threadId,
              runId,
              ...(result.finalOutput === null || result.finalOutput === undefined
                ? {}
                : { result: result.finalOutput }),
              outcome: { type: "success" },
              ...usage,
            },
            at,
          ),
        );
        return;
      case "suspended":
        if (result.pendingToolCalls.length > 0) {
          const interrupts = result.pendingToolCalls.map((call) => toInterrupt(result.runId, call));
          out.push(
            stamp(
              { type: "RUN_FINISHED", threadId, runId, outcome: { type: "interrupt", interrupts }, ...usage },
              at,
            ),
          );
          return;
        }
        break;
      case "cancelled":
        // 0.0.59 has no cancelled outcome (its schema refuses one), so a cancelled run is an error there.
        if (this.options.profile === "1.0") {
          out.push(
            stamp({ type: "RUN_FINISHED", threadId, runId, outcome: { type: "cancelled" }, ...usage }, at),
          );
          return;
        }
        out.push(
          stamp(
            { type: "RUN_ERROR", message: result.error ?? "The run was cancelled", code: "cancelled" },
            at,
          ),
        );
        return;
      default:
        break;
    }
    const message = result.error ?? this.failure?.message ?? `The run ended: ${result.stopReason}`;
    const code = result.errorDetails?.code ?? this.failure?.code ?? result.stopReason;
    out.push(stamp({ type: "RUN_ERROR", message, code }, at));
  }

  /** A tool call's START, ARGS (the whole arguments as one JSON delta) and END, once per call. */
  private announce(
    out: AgUiEvent[],
    call: { toolCallId: string; toolName: string; params?: Record<string, unknown> },
    where: { id: string; at: number },
  ): void {
    const { toolCallId, toolName, params } = call;
    const { id, at } = where;
    if (this.announced.has(toolCallId)) return;
    this.announced.add(toolCallId);
    this.stepMessage ??= id;
    out.push(
      stamp(
        { type: "TOOL_CALL_START", toolCallId, toolCallName: toolName, parentMessageId: this.stepMessage },
        at,
      ),
    );
    if (params !== undefined)
      out.push(stamp({ type: "TOOL_CALL_ARGS", toolCallId, delta: JSON.stringify(params) }, at));
    out.push(stamp({ type: "TOOL_CALL_END", toolCallId }, at));
  }

  private closeText(out: AgUiEvent[], at: number | undefined): void {
    if (this.text === undefined) return;
    out.push(stamp({ type: "TEXT_MESSAGE_END", messageId: this.text }, at));
    this.text = undefined;
  }

  private closeReasoning(out: AgUiEvent[], at: number | undefined): void {
    if (this.reasoning === undefined) return;
    out.push(stamp({ type: "REASONING_MESSAGE_END", messageId: this.reasoning }, at));
    out.push(stamp({ type: "REASONING_END", messageId: this.reasoning }, at));
    this.reasoning = undefined;
  }

  private closeContent(out: AgUiEvent[], at: number | undefined): void {
    this.closeReasoning(out, at);
    this.closeText(out, at);
  }

  private closeAll(out: AgUiEvent[], at: number | undefined): void {
    this.closeContent(out, at);
    for (const stepName of this.steps) out.push(stamp({ type: "STEP_FINISHED", stepName }, at));
    this.steps.clear();
  }
}

/** The event with its timestamp (whole milliseconds, as the schema wants), when there is one. */
function stamp(event: AgUiEvent, timestamp: number | undefined): AgUiEvent {
  return timestamp === undefined ? event : { ...event, timestamp: Math.trunc(timestamp) };
}

function codeOf(code: unknown): { code?: string } {
  return typeof code === "string" ? { code } : {};
}

/** A tool result as the text a tool message holds: a string as is, anything else as JSON. */
function resultText(result: unknown): string {
  if (typeof result === "string") return result;
  return JSON.stringify(result) ?? "";
}

/** The run's token counts as AG-UI's usage list; none before the first model call. */
function usageOf(usage: RunUsage | undefined): { usage?: Record<string, number>[] } {
  if (usage === undefined || usage.llmCalls === 0) return {};
  return {
    usage: [
      {
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        totalTokens: usage.totalTokens,
        reasoningTokens: usage.reasoningTokens,
        cachedInputTokens: usage.inputTokensCached,
      },
    ],
  };
}
