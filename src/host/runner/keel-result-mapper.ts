import type { RunResult } from "../../contracts/run-types.js";
import type { RunStreamChunk } from "../../runtime/stream-chunk.js";
import type { StateScope } from "../wire/run-context.js";
import { RUN_FAILURE_CODES, type RunResultBody } from "../wire/run-result.js";
import { type ArtifactFileSender, artifactResult } from "./artifact-result.js";
import { type InteractionSupport, suspensionInteractions } from "./suspension-interactions.js";

/** The host-state key under which a suspended Keel run waits for the event that resumes it. */
export const SUSPENDED_RUN_KEY = "keel.suspended_run_id";

/**
 * Turns a Keel run's stream into the protocol's results: answer text into `message.delta` (when the run may
 * stream), tool calls into `tool.call.*`, artifacts into `artifact.created`, and the finish into
 * `message.completed` + `run.completed`, or `run.failed` with a code naming the stop reason. One mapper per run;
 * it numbers the deltas. An artifact too large to carry inline is sent to the host as a file first, so mapping is
 * asynchronous and keeps the results in order.
 */
export class KeelResultMapper {
  private deltas = 0;
  private readonly streaming: boolean;
  private readonly resumedRunId: string | undefined;
  private readonly suspensionScope: StateScope;
  private readonly sendFile: ArtifactFileSender | undefined;
  private readonly interactions: InteractionSupport | undefined;

  /**
   * `suspensionScope`: the host-state scope that keeps a suspended run's id; `conversation` by default.
   * `sendFile`: how a large artifact reaches the host; without it, such an artifact goes as metadata alone.
   * `interactions`: what the platform can show, when it shows interactions; a suspension then asks about each
   * waiting call with one.
   */
  constructor(options: {
    streaming: boolean;
    resumedRunId?: string;
    suspensionScope?: StateScope;
    sendFile?: ArtifactFileSender;
    interactions?: InteractionSupport;
  }) {
    this.sendFile = options.sendFile;
    this.interactions = options.interactions;
    this.streaming = options.streaming;
    this.resumedRunId = options.resumedRunId;
    this.suspensionScope = options.suspensionScope ?? "conversation";
  }

  async map(chunk: RunStreamChunk): Promise<RunResultBody[]> {
    switch (chunk.kind) {
      case "llm.delta":
        if (!this.streaming || chunk.payload.text.length === 0) return [];
        return [
          {
            type: "message.delta",
            data: { chunk: { role: "assistant", content: chunk.payload.text, msg_sequence: this.deltas++ } },
          },
        ];
      case "tool.started":
        return [
          {
            type: "tool.call.started",
            data: {
              tool_call_id: chunk.payload.toolCallId,
              tool_name: chunk.payload.toolId,
              parameters: chunk.payload.params,
            },
          },
        ];
      case "tool.finished": {
        const payload = chunk.payload;
        const base = { tool_call_id: payload.toolCallId, tool_name: payload.toolId };
        if (payload.ok === false)
          return [{ type: "tool.call.completed", data: { ...base, error: payload.error } }];
        return [{ type: "tool.call.completed", data: { ...base, result: asObject(payload.result) } }];
      }
      case "artifact":
        return [await artifactResult(chunk.payload, this.sendFile)];
      case "run.finished":
        return this.finish(chunk.result);
      default:
        return [];
    }
  }

  /** The results that end the run, from its result. */
  finish(result: RunResult): RunResultBody[] {
    const usage = {
      prompt_tokens: result.usage.inputTokens,
      completion_tokens: result.usage.outputTokens,
      total_tokens: result.usage.totalTokens,
    };
    const results: RunResultBody[] = [];
    if (result.stopReason === "suspended") {
      const calls = result.pendingToolCalls.length;
      return [
        {
          type: "state.updated",
          data: { scope: this.suspensionScope, key: SUSPENDED_RUN_KEY, value: result.runId },
        },
        ...(this.interactions
          ? suspensionInteractions(result.runId, result.pendingToolCalls, this.interactions)
          : []),
        {
          type: "run.failed",
          data: {
            code: RUN_FAILURE_CODES.SUSPENDED,
            error: `the agent waits for a decision on ${calls} tool call${calls === 1 ? "" : "s"}; a later event resumes it`,
            retryable: false,
          },
          usage,
        },
      ];
    }
    // A resumed run that ends for good no longer waits: the next event starts afresh.
    if (this.resumedRunId !== undefined) {
      results.push({
        type: "state.updated",
        data: { scope: this.suspensionScope, key: SUSPENDED_RUN_KEY, value: null },
      });
    }
    if (result.stopReason === "completed") {
      const output = result.finalOutput;
      const text = typeof output === "string" ? output : JSON.stringify(output ?? null);
      results.push(
        { type: "message.completed", data: { message: { role: "assistant", content: text } } },
        { type: "run.completed", data: { finish_reason: "stop" }, usage },
      );
      return results;
    }
    const code =
      result.stopReason === "cancelled" ? RUN_FAILURE_CODES.CANCELLED : `runner.${result.stopReason}`;
    results.push({
      type: "run.failed",
      data: {
        code,
        error: result.error ?? `the run stopped: ${result.stopReason}`,
        retryable: result.stopReason === "timeout",
      },
      usage,
    });
    return results;
  }
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : { value: value ?? null };
}
