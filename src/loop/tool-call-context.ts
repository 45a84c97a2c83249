import type { LanguageModel, ModelCallOptions } from "../contracts/language-model.js";
import type { Message } from "../contracts/message.js";
import type { RunArtifact, RunRequest, RunUsage } from "../contracts/run-types.js";
import type { EventBus } from "../contracts/runtime-event.js";
import type {
  BackgroundJobSlot,
  RunContext,
  Tool,
  ToolContext,
  ToolExecutionRequest,
  ToolExecutionSpec,
  ToolExecutor,
  ToolResultRecord,
} from "../contracts/tool.js";
import type { RunFolder } from "../run-folders/run-folder.js";
import type { SessionArtifact } from "../sessions/session-manager.js";
import type { CancelScope } from "./cancel-scope.js";

/** What a tool call needs of its run beyond the run's context: the run driver. */
export interface ToolCallHost {
  readonly scope: CancelScope;
  /** The run's `functionInvocationKwargs`: only tools and function middleware see them. */
  readonly functionInvocationKwargs: Record<string, unknown> | undefined;
  /** The run folder's `workspace/` when the run keeps one. */
  readonly workspaceDir?: string | undefined;
  /** The run's folder when it keeps one. */
  readonly runFolder?: RunFolder | undefined;
  /** Emit a `tool.delta` for a call. */
  emitToolDelta(toolCallId: string, toolId: string, text: string): void;
  /** Record a tool's own event in the run's numbered log. */
  emit(kind: string, payload: Record<string, unknown>): void;
}

/**
 * The context of one tool call: the run's context (read through, never copied) plus the call. Its own
 * AbortSignal is made only if the tool reads `signal`, and follows the run's cancellation.
 */
export class ToolCallContext implements ToolContext, ToolExecutionRequest {
  protected controller: AbortController | null = null;
  protected unlink: (() => void) | null = null;
  private lazyMetadata: Record<string, unknown> | null = null;
  /** A background tool's call: where its job's handle is kept (set by the tool stage). */
  backgroundJob: BackgroundJobSlot | undefined = undefined;

  // biome-ignore lint/complexity/useMaxParams: made once per tool call on the loop's hot path; an options object would be a second allocation
  constructor(
    readonly run: RunContext,
    readonly toolCallId: string,
    readonly toolId: string,
    readonly tool: Tool,
    public params: Record<string, unknown>,
    readonly executionSpec: ToolExecutionSpec,
    protected readonly host: ToolCallHost,
    readonly resumeInput: unknown = undefined,
  ) {}

  // ── ToolExecutionRequest ──
  get metadata(): Record<string, unknown> {
    if (this.lazyMetadata === null) this.lazyMetadata = {};
    return this.lazyMetadata;
  }
  get context(): ToolContext {
    return this;
  }
  get cancelled(): boolean {
    return this.host.scope.cancelled || this.controller?.signal.aborted === true;
  }
  onCancel(callback: (reason: unknown) => void): () => void {
    return this.host.scope.onCancel(callback);
  }
  get signal(): AbortSignal {
    if (this.controller === null) {
      const controller = new AbortController();
      this.controller = controller;
      this.unlink = this.host.scope.onCancel((reason) => controller.abort(reason));
    }
    return this.controller.signal;
  }
  abort(reason: unknown): void {
    this.controller?.abort(reason);
  }
  /** A retry after a timeout gets a signal that is not aborted yet (the run's cancellation still aborts it). */
  renewSignal(): void {
    if (this.controller?.signal.aborted !== true || this.host.scope.cancelled) return;
    this.release();
    this.controller = null;
  }
  /** Drop the link to the run's cancellation once the call is over. */
  release(): void {
    this.unlink?.();
    this.unlink = null;
  }

  // ── ToolContext ──
  get arguments(): Record<string, unknown> {
    return this.params;
  }
  get workspaceDir(): string | undefined {
    return this.host.workspaceDir;
  }
  get runFolder(): RunFolder | undefined {
    return this.host.runFolder;
  }
  get kwargs(): Record<string, unknown> {
    return this.host.functionInvocationKwargs ?? EMPTY;
  }
  get session(): { id: string; state: Record<string, unknown> } {
    return { id: this.run.sessionId, state: this.run.state };
  }
  emitDelta(text: string): void {
    this.host.emitToolDelta(this.toolCallId, this.toolId, text);
  }
  emitEvent(kind: string, payload: Record<string, unknown>): void {
    this.host.emit(kind, payload);
  }

  // ── RunContext, read through ──
  get agentId(): string {
    return this.run.agentId;
  }
  get sessionId(): string {
    return this.run.sessionId;
  }
  get runId(): string {
    return this.run.runId;
  }
  get inputText(): string {
    return this.run.inputText;
  }
  get deps(): unknown {
    return this.run.deps;
  }
  get state(): Record<string, unknown> {
    return this.run.state;
  }
  set state(value: Record<string, unknown>) {
    this.run.state = value;
  }
  get tools(): Readonly<Record<string, Tool>> {
    return this.run.tools;
  }
  get llmClient(): LanguageModel {
    return this.run.llmClient;
  }
  get llmOptions(): ModelCallOptions {
    return this.run.llmOptions;
  }
  get eventBus(): EventBus {
    return this.run.eventBus;
  }
  get memoryView(): Record<string, unknown> {
    return this.run.memoryView;
  }
  set memoryView(value: Record<string, unknown>) {
    this.run.memoryView = value;
  }
  get toolResults(): ToolResultRecord[] {
    return this.run.toolResults;
  }
  get scratch(): Record<string, unknown> {
    return this.run.scratch;
  }
  get systemPromptFragments(): string[] {
    return this.run.systemPromptFragments;
  }
  get transcript(): Message[] {
    return this.run.transcript;
  }
  get sessionArtifacts(): SessionArtifact[] {
    return this.run.sessionArtifacts;
  }
  get assemblyMetadata(): Record<string, unknown> {
    return this.run.assemblyMetadata;
  }
  get runRequest(): RunRequest {
    return this.run.runRequest;
  }
  get toolExecutor(): ToolExecutor {
    return this.run.toolExecutor;
  }
  get usage(): RunUsage {
    return this.run.usage;
  }
  get artifacts(): RunArtifact[] {
    return this.run.artifacts;
  }
}

const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;
