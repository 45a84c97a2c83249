import type { RunResult, StopReason } from "../../contracts/run-types.js";
import type { RunStreamChunk } from "../../runtime/stream-chunk.js";
import type { UiFinishReason, UiMessageChunk, UiMessageProfile } from "./ui-message-chunk.js";

export interface UiMessageTranslatorOptions {
  /** The AI SDK major the client runs; `v6` by default. */
  profile?: UiMessageProfile;
  /**
   * The assistant message's id in `start`. By default the run's id, so a run continued after a decision goes on
   * in the same client message, as the client expects of an approval round trip.
   */
  messageId?: string;
  /**
   * The text the client shows for a failed run. Keel's error messages are written for users and have secrets
   * redacted, so by default they are sent as they are; give this to send less (the AI SDK's own servers send
   * "An error occurred.").
   */
  errorText?: (error: { message: string; code?: string | undefined }) => string;
}

/** The prefix of an approval id: the run and the call it approves travel with it, so no server state is needed. */
const APPROVAL_PREFIX = "keel.";

/** The approval id of a suspended call, which the client sends back with its answer. */
export function approvalIdOf(runId: string, toolCallId: string): string {
  return `${APPROVAL_PREFIX}${runId}.${toolCallId}`;
}

/** The run an approval id names, or undefined for an id Keel did not issue. */
export function runIdOfApproval(approvalId: string): string | undefined {
  if (!approvalId.startsWith(APPROVAL_PREFIX)) return undefined;
  const rest = approvalId.slice(APPROVAL_PREFIX.length);
  const dot = rest.indexOf(".");
  return dot > 0 ? rest.slice(0, dot) : undefined;
}

const FINISH_REASONS: Record<StopReason, UiFinishReason> = {
  completed: "stop",
  suspended: "tool-calls",
  failed: "error",
  cancelled: "other",
  timeout: "other",
  max_steps: "other",
  budget_exhausted: "other",
};

/**
 * Turns one run's stream chunks into UI message chunks, in order, one Keel chunk at a time. The client refuses
 * a delta without its start and an output for a call it was never shown, so the translator keeps what it has
 * opened — a text or reasoning part, a step, the calls it announced — and closes every open part before a
 * step, a message or the stream ends. Events a chat UI has no place for (memory, permissions, checkpoints) are
 * left out.
 */
export class UiMessageTranslator {
  private readonly profile: UiMessageProfile;
  private readonly messageId: string | undefined;
  private readonly errorText: (error: { message: string; code?: string | undefined }) => string;
  private text: string | undefined;
  private reasoning: string | undefined;
  private inStep = false;
  /** What the `data-keel-run` part says of the run, kept to repeat it with the run's outcome. */
  private run: { runId: string; sessionId: string; agentId: string } | undefined;
  /** Between a `start` and its `finish` or `abort`. */
  private inMessage = false;
  /** The message was aborted: the cancelled run's `run.finished` that follows does not open another. */
  private aborted = false;
  /** Calls the client holds a part for, so an output never arrives for an unknown call. */
  private readonly shownCalls = new Set<string>();
  /** Calls a decision set going again: the client has their input already, so it is not sent twice. */
  private readonly decidedCalls = new Set<string>();
  /** Calls a denial ended: the client shows them denied, and the failure Keel records after is not sent. */
  private readonly deniedCalls = new Set<string>();

  constructor(options: UiMessageTranslatorOptions = {}) {
    this.profile = options.profile ?? "v6";
    this.messageId = options.messageId;
    this.errorText = options.errorText ?? ((error) => error.message);
  }

  /** The UI chunks for one Keel chunk; often none. */
  translate(chunk: RunStreamChunk): UiMessageChunk[] {
    const out: UiMessageChunk[] = [];
    if (!this.inMessage && !(this.aborted && chunk.kind === "run.finished")) this.open(chunk, out);
    switch (chunk.kind) {
      case "step.started":
        this.closeStep(out);
        out.push({ type: "start-step" });
        this.inStep = true;
        break;
      case "step.finished":
        this.closeStep(out);
        break;
      case "llm.delta":
        this.closeReasoning(out);
        if (this.text === undefined) {
          this.text = `text-${chunk.sequence}`;
          out.push({ type: "text-start", id: this.text });
        }
        out.push({ type: "text-delta", id: this.text, delta: chunk.payload.text });
        break;
      case "llm.reasoning":
        this.closeText(out);
        if (this.reasoning === undefined) {
          this.reasoning = `reasoning-${chunk.sequence}`;
          out.push({ type: "reasoning-start", id: this.reasoning });
        }
        out.push({ type: "reasoning-delta", id: this.reasoning, delta: chunk.payload.text });
        break;
      case "tool.started":
        this.closeParts(out);
        if (!this.decidedCalls.has(chunk.payload.toolCallId)) {
          out.push(this.showCall(chunk.payload.toolCallId, chunk.payload.toolId, chunk.payload.params));
        }
        break;
      case "tool.delta":
        out.push({
          type: "data-keel-tool-delta",
          data: { toolCallId: chunk.payload.toolCallId, text: chunk.payload.text },
          transient: true,
        });
        break;
      case "tool.finished":
        this.toolFinished(chunk.payload, out);
        break;
      case "tool.suspended":
        this.closeParts(out);
        out.push(this.showCall(chunk.payload.toolCallId, chunk.payload.toolId, chunk.payload.params));
        if (this.profile !== "v5") {
          const approvalId = approvalIdOf(chunk.runId, chunk.payload.toolCallId);
          out.push({ type: "tool-approval-request", approvalId, toolCallId: chunk.payload.toolCallId });
        }
        out.push({
          type: "data-keel-suspended",
          id: `suspended-${chunk.payload.toolCallId}`,
          data: {
            runId: chunk.runId,
            toolCallId: chunk.payload.toolCallId,
            toolName: chunk.payload.toolId,
            resumeMode: chunk.payload.resumeMode,
            ...(chunk.payload.reason === undefined ? {} : { reason: chunk.payload.reason }),
          },
        });
        break;
      case "tool.decision":
        this.toolDecision(chunk.payload, out);
        break;
      case "artifact":
        out.push({
          type: "data-keel-artifact",
          data: { name: chunk.payload.name, kind: chunk.payload.kind, payload: chunk.payload.payload },
        });
        break;
      case "usage.updated":
        // One part, replaced in place by each update: the client keys data parts by type and id.
        out.push({ type: "data-keel-usage", id: "usage", data: chunk.payload.usage });
        break;
      case "run.failed":
        this.closeParts(out);
        out.push({
          type: "error",
          errorText: this.errorText({ message: chunk.payload.error, code: chunk.payload.errorDetails?.code }),
        });
        break;
      case "run.cancelled":
        this.closeStep(out);
        out.push({ type: "abort" });
        this.inMessage = false;
        this.aborted = true;
        break;
      case "run.finished":
        this.finish(chunk.result, out);
        break;
      default:
        break;
    }
    return out;
  }

  /**
   * What closes the message when the stream ends before its `run.finished` — the client left, or reading the run
   * failed (`error`): open parts are closed and the message finished, with the error first when there is one.
   */
  end(error?: unknown): UiMessageChunk[] {
    const out: UiMessageChunk[] = [];
    if (error !== undefined) {
      if (!this.inMessage) {
        out.push({ type: "start", ...(this.messageId === undefined ? {} : { messageId: this.messageId }) });
        this.inMessage = true;
      }
      this.closeParts(out);
      const message = error instanceof Error ? error.message : String(error);
      const code = (error as { code?: unknown } | null)?.code;
      out.push({
        type: "error",
        errorText: this.errorText({ message, code: typeof code === "string" ? code : undefined }),
      });
    }
    if (this.inMessage) {
      this.closeStep(out);
      out.push(this.finishChunk(error === undefined ? "other" : "error"));
      this.inMessage = false;
    }
    return out;
  }

  private open(chunk: RunStreamChunk, out: UiMessageChunk[]): void {
    out.push({ type: "start", messageId: this.messageId ?? chunk.runId });
    this.aborted = false;
    this.run = { runId: chunk.runId, sessionId: chunk.sessionId, agentId: chunk.agentId };
    out.push({ type: "data-keel-run", id: "run", data: this.run });
    this.inMessage = true;
  }

  private finish(result: RunResult, out: UiMessageChunk[]): void {
    if (!this.inMessage) return;
    this.closeStep(out);
    out.push({
      type: "data-keel-run",
      id: "run",
      data: {
        ...this.run,
        runId: result.runId,
        stopReason: result.stopReason,
        ...(result.error === undefined
          ? {}
          : { error: this.errorText({ message: result.error, code: result.errorDetails?.code }) }),
      },
    });
    if (result.stopReason === "cancelled") {
      // A log without `run.cancelled` before its cancelled end.
      out.push({ type: "abort" });
    } else {
      out.push(this.finishChunk(FINISH_REASONS[result.stopReason]));
    }
    this.inMessage = false;
  }

  private finishChunk(reason: UiFinishReason): UiMessageChunk {
    // `finishReason` came in 5.0.92: the 5.0.x clients before it refuse the field.
    return this.profile === "v5" ? { type: "finish" } : { type: "finish", finishReason: reason };
  }

  /** The chunk that gives the client a call's part, with its whole input: Keel has it at once, never in pieces. */
  private showCall(toolCallId: string, toolName: string, input: unknown): UiMessageChunk {
    this.shownCalls.add(toolCallId);
    return { type: "tool-input-available", toolCallId, toolName, input };
  }

  private toolFinished(
    payload: {
      toolCallId: string;
      toolId: string;
      ok?: boolean | undefined;
      result?: unknown;
      error?: unknown;
    },
    out: UiMessageChunk[],
  ): void {
    this.closeParts(out);
    const { toolCallId } = payload;
    if (this.deniedCalls.has(toolCallId)) return;
    if (!this.shownCalls.has(toolCallId) && !this.decidedCalls.has(toolCallId)) {
      out.push(this.showCall(toolCallId, payload.toolId, undefined));
    }
    if (payload.ok === false) {
      out.push({ type: "tool-output-error", toolCallId, errorText: String(payload.error) });
    } else {
      out.push({ type: "tool-output-available", toolCallId, output: payload.result ?? null });
    }
  }

  private toolDecision(
    payload: {
      toolCallId: string;
      toolId: string;
      action: string;
      result?: unknown;
      reason?: string | undefined;
    },
    out: UiMessageChunk[],
  ): void {
    this.closeParts(out);
    const { toolCallId } = payload;
    this.decidedCalls.add(toolCallId);
    if (payload.action === "deny") {
      this.deniedCalls.add(toolCallId);
      if (this.profile === "v5") {
        out.push({ type: "tool-output-error", toolCallId, errorText: payload.reason ?? "Tool call denied" });
      } else {
        out.push({ type: "tool-output-denied", toolCallId });
      }
    } else if (payload.action === "result") {
      // The decision is the call's result: no tool runs, so nothing else will report it.
      this.deniedCalls.add(toolCallId);
      out.push({ type: "tool-output-available", toolCallId, output: payload.result ?? null });
    }
  }

  private closeText(out: UiMessageChunk[]): void {
    if (this.text === undefined) return;
    out.push({ type: "text-end", id: this.text });
    this.text = undefined;
  }

  private closeReasoning(out: UiMessageChunk[]): void {
    if (this.reasoning === undefined) return;
    out.push({ type: "reasoning-end", id: this.reasoning });
    this.reasoning = undefined;
  }

  private closeParts(out: UiMessageChunk[]): void {
    this.closeText(out);
    this.closeReasoning(out);
  }

  private closeStep(out: UiMessageChunk[]): void {
    this.closeParts(out);
    if (!this.inStep) return;
    out.push({ type: "finish-step" });
    this.inStep = false;
  }
}

/** A run's stream as UI message chunks; a stream that fails ends with an `error` chunk and a closed message. */
export async function* toUiMessageChunks(
  chunks: AsyncIterable<RunStreamChunk>,
  options: UiMessageTranslatorOptions = {},
): AsyncGenerator<UiMessageChunk> {
  const translator = new UiMessageTranslator(options);
  let failure: unknown;
  try {
    for await (const chunk of chunks) yield* translator.translate(chunk);
  } catch (error) {
    failure = error;
  }
  yield* translator.end(failure);
}
