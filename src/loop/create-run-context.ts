import type { LanguageModel, ModelCallOptions } from "../contracts/language-model.js";
import type { Message } from "../contracts/message.js";
import type { RunArtifact, RunRequest, RunUsage } from "../contracts/run-types.js";
import type { EventBus } from "../contracts/runtime-event.js";
import type { RunContext, Tool, ToolExecutor, ToolResultRecord } from "../contracts/tool.js";
import { RunEventBus } from "../events/run-event-bus.js";
import type { RunEventLog } from "../events/run-event-log.js";
import type { SessionArtifact } from "../sessions/session-manager.js";

/**
 * One object per run with a fixed shape. Containers most runs never touch are made on first read: a run parked
 * on a tool holds this object for as long as it waits (S3).
 */
class RunContextRecord implements RunContext {
  memoryView: Record<string, unknown> = {};
  readonly transcript: Message[] = [];
  sessionArtifacts: SessionArtifact[] = NO_ARTIFACTS;
  assemblyMetadata: Record<string, unknown> = NO_METADATA;
  private lazyToolResults: ToolResultRecord[] | null = null;
  private lazyScratch: Record<string, unknown> | null = null;
  private lazyFragments: string[] | null = null;
  private lazyArtifacts: RunArtifact[] | null = null;

  get toolResults(): ToolResultRecord[] {
    if (this.lazyToolResults === null) this.lazyToolResults = [];
    return this.lazyToolResults;
  }

  get scratch(): Record<string, unknown> {
    if (this.lazyScratch === null) this.lazyScratch = {};
    return this.lazyScratch;
  }

  get systemPromptFragments(): string[] {
    if (this.lazyFragments === null) this.lazyFragments = [];
    return this.lazyFragments;
  }

  /** The run's view of the bus (what is emitted on it goes into the run's log); most runs never read it. */
  get eventBus(): EventBus {
    if (this.lazyBus === null) this.lazyBus = new RunEventBus(this.log);
    return this.lazyBus;
  }

  get artifacts(): RunArtifact[] {
    if (this.lazyArtifacts === null) this.lazyArtifacts = [];
    return this.lazyArtifacts;
  }

  /** Whether anything was written to scratch (read without making it). */
  get hasScratch(): boolean {
    return this.lazyScratch !== null;
  }

  get hasSystemPromptFragments(): boolean {
    return this.lazyFragments !== null && this.lazyFragments.length > 0;
  }

  readonly agentId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly inputText: string;
  readonly deps: unknown;
  state: Record<string, unknown>;
  readonly tools: Readonly<Record<string, Tool>>;
  readonly llmClient: LanguageModel;
  readonly llmOptions: ModelCallOptions;
  private readonly log: RunEventLog;
  private lazyBus: EventBus | null = null;
  readonly runRequest: RunRequest;
  readonly toolExecutor: ToolExecutor;
  readonly usage: RunUsage;

  constructor(input: RunContextInput) {
    this.agentId = input.agentId;
    this.sessionId = input.sessionId;
    this.runId = input.runId;
    this.inputText = input.request.inputText;
    this.deps = input.request.deps;
    this.state = input.state;
    this.tools = input.tools;
    this.llmClient = input.model;
    this.llmOptions = input.modelOptions;
    this.log = input.log;
    this.runRequest = input.request;
    this.toolExecutor = input.toolExecutor;
    this.usage = input.usage;
  }
}

// Frozen: the run replaces them after context assembly; nothing may write into the shared empty ones.
const NO_ARTIFACTS = Object.freeze([]) as unknown as SessionArtifact[];
const NO_METADATA = Object.freeze({}) as Record<string, unknown>;

export interface RunContextInput {
  agentId: string;
  sessionId: string;
  runId: string;
  request: RunRequest;
  state: Record<string, unknown>;
  tools: Readonly<Record<string, Tool>>;
  model: LanguageModel;
  modelOptions: ModelCallOptions;
  /** The run's log: `ctx.eventBus` is its view of the bus, made on first read. */
  log: RunEventLog;
  toolExecutor: ToolExecutor;
  usage: RunUsage;
}

/** What the loop may ask of its own run contexts without making their lazy containers. */
export interface LazyContainers {
  readonly hasScratch: boolean;
  readonly hasSystemPromptFragments: boolean;
}

export function hasLazyContainers(ctx: RunContext): ctx is RunContext & LazyContainers {
  return ctx instanceof RunContextRecord;
}

/** A run's context; one object per run with a fixed shape. */
export function createRunContext(input: RunContextInput): RunContext {
  return new RunContextRecord(input);
}
