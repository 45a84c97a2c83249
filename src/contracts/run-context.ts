import type { SessionArtifact } from "../sessions/session-manager.js";
import type { LanguageModel, ModelCallOptions } from "./language-model.js";
import type { Message } from "./message.js";
import type { RunArtifact, RunRequest, RunUsage } from "./run-types.js";
import type { EventBus } from "./runtime-event.js";
import type { Tool } from "./tool.js";
import type { ToolExecutor } from "./tool-executor.js";

export interface ToolResultRecord {
  toolCallId: string;
  toolId: string;
  result: unknown;
  success: boolean;
}

/** What patterns, hooks, memory and tools consume during a run (RT-11). */
export interface RunContext {
  readonly agentId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly inputText: string;
  readonly deps: unknown;
  /** The session's persisted state; `ctx.session.state` in a tool is this same object. */
  state: Record<string, unknown>;
  readonly tools: Readonly<Record<string, Tool>>;
  readonly llmClient: LanguageModel;
  readonly llmOptions: ModelCallOptions;
  readonly eventBus: EventBus;
  /** What memory injected for this run (e.g. `history`). */
  memoryView: Record<string, unknown>;
  readonly toolResults: ToolResultRecord[];
  /** Per-run scratch space; not persisted. */
  readonly scratch: Record<string, unknown>;
  readonly systemPromptFragments: string[];
  /** The run's transcript: the messages sent to the model, appended in place. */
  readonly transcript: Message[];
  readonly sessionArtifacts: SessionArtifact[];
  readonly assemblyMetadata: Record<string, unknown>;
  readonly runRequest: RunRequest;
  readonly toolExecutor: ToolExecutor;
  readonly usage: RunUsage;
  readonly artifacts: RunArtifact[];
}
