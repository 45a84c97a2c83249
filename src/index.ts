/** Keel's public API. Everything here is stable within a major version; see docs/architecture.md. */

export type {
  AgentDefinition,
  AppConfig,
  LLMOptions,
  MiddlewareConfig,
  PluginRef,
  StopConditionSpec,
  ToolRef,
} from "./config/app-config-schema.js";
export { formatConfigError } from "./config/config-issues.js";
export { expandEnv } from "./config/expand-env.js";
export {
  type AgentConfig,
  type DefinedAgent,
  defineAgent,
  type KeelConfig,
} from "./config/keel-config.js";
export { type LoadedConfig, loadConfig, parseConfig } from "./config/load-config.js";
export { nearMatch, similarityRatio } from "./config/near-match.js";
export type {
  ContextAssembler,
  ContextAssemblyInput,
  ContextAssemblyResult,
} from "./context/context-assembler.js";
export {
  type Hook,
  type HookContext,
  type ModelResponse,
  PHASES,
  type Phase,
  type ToolCallState,
  type ToolGateDecision,
} from "./contracts/hook.js";
export {
  approximateTokens,
  isLanguageModel,
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStopReason,
  type ModelStreamPart,
  type ModelToolSpec,
  type ModelUsage,
} from "./contracts/language-model.js";
export type {
  AssistantMessage,
  ImagePart,
  Message,
  ReasoningPart,
  SystemMessage,
  TextPart,
  ToolCall,
  ToolMessage,
  UserMessage,
} from "./contracts/message.js";
export type {
  AgentMiddleware,
  AgentMiddlewareContext,
  AnyMiddleware,
  ChatMiddleware,
  ChatMiddlewareContext,
  FunctionMiddleware,
  FunctionMiddlewareContext,
  Middleware,
  MiddlewareFunction,
  MiddlewareLevel,
  MiddlewareObject,
  MiddlewareSession,
  Next,
} from "./contracts/middleware.js";
export type {
  AgentRef,
  CostBreakdown,
  OutputType,
  ResumeMode,
  RunArtifact,
  RunBudget,
  RunRecord,
  RunRequest,
  RunResult,
  RunStatus,
  RunSteering,
  RunUsage,
  StopReason,
  SuspendedToolCall,
  TerminationReason,
  ToolCallStatus,
} from "./contracts/run-types.js";
export { type EventBus, type EventHandler, RuntimeEvent } from "./contracts/runtime-event.js";
export type {
  BackgroundJobSlot,
  BatchToolExecutor,
  PolicyDecision,
  PolicyToolExecutor,
  RunContext,
  StreamingToolExecutor,
  ToolExecutionRequest,
  ToolExecutionResult,
  ToolExecutionStreamPart,
  ToolExecutor,
  ToolResultRecord,
} from "./contracts/tool.js";
export {
  type BackgroundTool,
  type BatchItem,
  type BatchResult,
  type BatchTool,
  DEFAULT_EXECUTION_SPEC,
  isBackgroundTool,
  isBatchTool,
  isStreamingTool,
  type JobHandle,
  type JobState,
  type JobStatus,
  type JsonSchema,
  type StreamingTool,
  type Tool,
  type ToolContext,
  type ToolExecutionSpec,
  type ToolResult,
  type ToolStreamPart,
} from "./contracts/tool.js";
export {
  BudgetExhaustedError,
  ConfigError,
  type ConfigIssue,
  ConfigLoadError,
  ConfigValidationError,
  DecisionError,
  IllegalTransitionError,
  LLMConnectionError,
  LLMRateLimitError,
  LLMResponseError,
  ModelRetryError,
  OutputValidationError,
  PatternError,
  PermanentToolError,
  PermissionDeniedError,
  PluginConfigError,
  PluginLoadError,
  RunBusyError,
  RunEventsLostError,
  RunNotCompletedError,
  SandboxError,
  type SandboxRule,
  SessionQueueFullError,
  StoreUnavailableError,
  ToolAuthError,
  ToolCancelledError,
  ToolError,
  ToolRateLimitError,
  ToolTimeoutError,
  ToolUnavailableError,
  ToolValidationError,
  UnknownRunError,
  type ValidationErrorInfo,
} from "./errors/error-classes.js";
export { ERROR_CODES, type ErrorCode } from "./errors/error-codes.js";
export {
  type ErrorDetails,
  isRetryable,
  KeelError,
  type KeelErrorContext,
  type KeelErrorOptions,
  toErrorDetails,
} from "./errors/keel-error.js";
export { AsyncEventBus } from "./events/async-event-bus.js";
export { createOtelBridge, OTEL_API_PACKAGE, type OtelBridgeOptions } from "./events/create-otel-bridge.js";
export {
  EVENT_SCHEMAS,
  type EventName,
  type EventPayloads,
  type EventSchema,
} from "./events/event-schemas.js";
export { FileLoggingEventBus } from "./events/file-logging-event-bus.js";
export type { PayloadField } from "./events/payload-fields.js";
export {
  isTraceContextCarrier,
  type RunTraceContext,
  type TraceContextCarrier,
} from "./events/trace-context-carrier.js";
export { getLogger, type Logger, setLogger } from "./logging/logger.js";
export type { StickyAction, ToolDecision } from "./loop/decisions.js";
export type { LoadedRunState } from "./loop/resume/index.js";
export {
  type CheckpointPhase,
  checkpointIdOf,
  parseCheckpointId,
  RUN_STATE_SCHEMA_VERSION,
  type RunState,
  type ToolCallRecord,
} from "./loop/run-state.js";
export {
  canTransitionRun,
  canTransitionToolCall,
  summarizeToolPhase,
  transitionRun,
  transitionToolCall,
} from "./loop/run-status.js";
export { DefaultRuntime, type RuntimePlugin } from "./loop/runtime-plugin.js";
export { runStatusOf, stopReasonOf } from "./loop/termination.js";
export type { McpToolData } from "./mcp/mcp-result.js";
export { MCP_SDK_PACKAGE } from "./mcp/mcp-sdk.js";
export { McpTool } from "./mcp/mcp-tool.js";
export { McpToolset } from "./mcp/mcp-toolset.js";
export type { McpConnectionMode, McpServerConfig, McpToolsetOptions } from "./mcp/mcp-toolset-options.js";
export type { Memory } from "./memory/memory.js";
export {
  canRecall,
  isMemoryStore,
  type MemoryEntry,
  type MemoryHit,
  type MemoryRecallInput,
  type MemoryStore,
  type MemoryWriteInput,
  type RecallSource,
  type RetrievingMemory,
  recallFrom,
} from "./memory/memory-store.js";
export { rankByTokenOverlap, tokenize } from "./memory/rank-by-token-overlap.js";
export {
  SESSION_MEMORY_STATE_KEY,
  SessionMemoryStore,
  type SessionMemoryStoreOptions,
} from "./memory/session-memory-store.js";
export {
  MiddlewareTermination,
  type MiddlewareTerminationOptions,
} from "./middleware/middleware-termination.js";
export { computeCost, type ModelPricing, PRICE_TABLE, resolvePricing } from "./models/pricing.js";
export { EchoModel } from "./models/providers/mock/echo-model.js";
export { BasePattern } from "./patterns/base-pattern.js";
export type {
  FollowupResolution,
  Pattern,
  PatternDriver,
  ResponseRepairDecision,
  StepAction,
  ToolCallOutcome,
} from "./patterns/pattern.js";
export { PlanExecutePattern } from "./patterns/plan-execute-pattern.js";
export { ReactPattern } from "./patterns/react-pattern.js";
export { isPluginRef, type LoadPluginOptions, loadPlugin } from "./plugins/load-plugin.js";
export type { PluginDefinition, PluginFactoryContext, PluginKind } from "./plugins/plugin-registry.js";
export { BullmqRunQueue, type BullmqRunQueueOptions } from "./queue/bullmq-run-queue.js";
export { InProcessRunQueue } from "./queue/in-process-run-queue.js";
export type {
  QueuedRun,
  QueuedRunDelivery,
  QueuedRunHandler,
  RunEventFanout,
  RunQueue,
  RunQueueConsumer,
} from "./queue/run-queue.js";
export {
  DEFAULT_LARGE_OUTPUT_BYTES,
  type OffloadedOutput,
  offloadLargeOutput,
  TOOL_OUTPUT_KIND,
} from "./run-folders/large-output.js";
export { RunFolder, summarizePayload, summarizeValue, type ToolLogLine } from "./run-folders/run-folder.js";
export { runAgent, runAgentDetailed, streamAgent } from "./runtime/run-agent.js";
export type { DecideRequest, StreamRequest } from "./runtime/run-decisions.js";
export { Runtime } from "./runtime/runtime.js";
export {
  getPlugin,
  listPlugins,
  type PluginFactory,
  type PluginKindName,
  type PluginTypes,
  registerPlugin,
  unregisterPlugin,
} from "./runtime/seam-registries.js";
export {
  asCustomChunk,
  type CustomChunk,
  isChunk,
  type RunStreamChunk,
  RunStreamChunkKind,
  type RunStreamChunks,
  type StreamChunkOf,
  type StreamPayloads,
} from "./runtime/stream-chunk.js";
export type { CheckedPath, SandboxAccess } from "./sandbox/checked-path.js";
export type { ListEntry } from "./sandbox/directory-entries.js";
export { type ReadResult, Sandbox, type SandboxOptions, type WriteResult } from "./sandbox/sandbox.js";
export { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from "./sandbox/sandbox-limits.js";
export {
  createSandboxProvider,
  type SandboxProvider,
  type SandboxSettings,
  type WorkspaceContext,
} from "./sandbox/sandbox-provider.js";
export type { SandboxMode, SandboxRoot, SandboxRootOptions } from "./sandbox/sandbox-roots.js";
export { InMemorySessionManager } from "./sessions/in-memory-session-manager.js";
export type {
  CheckpointStore,
  RunStore,
  SessionArtifact,
  SessionCheckpoint,
  SessionManager,
  SessionScope,
  SessionStore,
  TranscriptStore,
} from "./sessions/session-manager.js";
export { LocalSkillsManager } from "./skills/local-skills-manager.js";
export type { SessionSkillSummary, SkillReference, SkillsManager } from "./skills/skills-manager.js";
export {
  type AgentAsToolOptions,
  type AgentRunner,
  AgentTool,
  agentAsTool,
} from "./tools/agent-as-tool.js";
export { BaseTool } from "./tools/base-tool.js";
export { defineTool, type ToolDefinition } from "./tools/define-tool.js";
export { ConcurrentBatchToolExecutor } from "./tools/executors/concurrent-batch-tool-executor.js";
export {
  FilesystemAwareToolExecutor,
  type FilesystemAwareToolExecutorOptions,
} from "./tools/executors/filesystem-aware-tool-executor.js";
export { RetryToolExecutor } from "./tools/executors/retry-tool-executor.js";
export { SafeToolExecutor } from "./tools/executors/safe-tool-executor.js";
export { SuspendToolCall } from "./tools/suspend-tool-call.js";
export { isToolset, type Toolset } from "./tools/toolset.js";
export {
  createFilesystemToolset,
  DEFAULT_FILESYSTEM_TOOLS,
  FILESYSTEM_TOOL_NAMES,
  type FilesystemToolName,
  type FilesystemToolsetOptions,
} from "./toolsets/filesystem/filesystem-toolset.js";
export type { GrepFilesData, GrepLimits, GrepMatch } from "./toolsets/filesystem/grep-files-tool.js";
export {
  createMemoryToolset,
  MEMORY_CANDIDATE_KIND,
  MEMORY_CANDIDATES_FILE,
  MEMORY_WRITE_MODES,
  type MemoryTool,
  type MemoryToolset,
  type MemoryToolsetOptions,
  type MemoryWriteMode,
  memoryWriteModeOf,
} from "./toolsets/memory/memory-toolset.js";
export {
  createExecuteCommandTool,
  type ExecuteCommandData,
  type ExecuteCommandToolOptions,
} from "./toolsets/shell/execute-command-tool.js";
export type { ProgramRunData, ProgramToolOptions } from "./toolsets/shell/run-program.js";
export {
  createSetEnvTool,
  DENIED_ENV_NAMES,
  type SetEnvData,
  type SetEnvToolOptions,
} from "./toolsets/shell/set-env-tool.js";
export { SHELL_ENV_STATE_KEY, sessionShellEnv } from "./toolsets/shell/shell-env-state.js";
export {
  createShellExecTool,
  type ShellExecData,
  type ShellExecToolOptions,
} from "./toolsets/shell/shell-exec-tool.js";
export {
  COMMAND_SYNTAX_CODE,
  CommandSyntaxError,
  type CommandSyntaxReason,
  splitCommandLine,
} from "./toolsets/shell/split-command-line.js";
export {
  createSkillsToolset,
  SKILL_NOT_FOUND_CODE,
  type SkillsToolsetOptions,
} from "./toolsets/skills/skills-toolset.js";

export const VERSION = "0.1.0";
