import { describe, expect, it } from "vitest";
import * as keel from "../src/index.js";
import * as testing from "../src/testing/index.js";

/** Pins what each entry exports, so a change to the public API is a deliberate one. */
describe("public API", () => {
  it("keel", () => {
    expect(Object.keys(keel).sort()).toMatchInlineSnapshot(`
      [
        "AgentTool",
        "AsyncEventBus",
        "BasePattern",
        "BaseTool",
        "BudgetExhaustedError",
        "COMMAND_SYNTAX_CODE",
        "CommandSyntaxError",
        "ConcurrentBatchToolExecutor",
        "ConfigError",
        "ConfigLoadError",
        "ConfigValidationError",
        "DEFAULT_EXECUTION_SPEC",
        "DEFAULT_FILESYSTEM_TOOLS",
        "DEFAULT_LARGE_OUTPUT_BYTES",
        "DEFAULT_SANDBOX_LIMITS",
        "DENIED_ENV_NAMES",
        "DecisionError",
        "DefaultRuntime",
        "ERROR_CODES",
        "EVENT_SCHEMAS",
        "EchoModel",
        "FILESYSTEM_TOOL_NAMES",
        "FileLoggingEventBus",
        "FilesystemAwareToolExecutor",
        "IllegalTransitionError",
        "InMemorySessionManager",
        "KeelError",
        "LLMConnectionError",
        "LLMRateLimitError",
        "LLMResponseError",
        "LocalSkillsManager",
        "MCP_SDK_PACKAGE",
        "MEMORY_CANDIDATES_FILE",
        "MEMORY_CANDIDATE_KIND",
        "MEMORY_WRITE_MODES",
        "MODEL_SPECIFICATION_VERSION",
        "McpTool",
        "McpToolset",
        "MiddlewareTermination",
        "ModelRetryError",
        "OutputValidationError",
        "PHASES",
        "PRICE_TABLE",
        "PatternError",
        "PermanentToolError",
        "PermissionDeniedError",
        "PlanExecutePattern",
        "PluginConfigError",
        "PluginLoadError",
        "RUN_STATE_SCHEMA_VERSION",
        "ReactPattern",
        "RetryToolExecutor",
        "RunBusyError",
        "RunEventsLostError",
        "RunFolder",
        "RunNotCompletedError",
        "RunStreamChunkKind",
        "Runtime",
        "RuntimeEvent",
        "SESSION_MEMORY_STATE_KEY",
        "SHELL_ENV_STATE_KEY",
        "SKILL_NOT_FOUND_CODE",
        "SafeToolExecutor",
        "Sandbox",
        "SandboxError",
        "SessionMemoryStore",
        "SessionQueueFullError",
        "SuspendToolCall",
        "TOOL_OUTPUT_KIND",
        "ToolAuthError",
        "ToolCancelledError",
        "ToolError",
        "ToolRateLimitError",
        "ToolTimeoutError",
        "ToolUnavailableError",
        "ToolValidationError",
        "UnknownRunError",
        "VERSION",
        "agentAsTool",
        "approximateTokens",
        "asCustomChunk",
        "canRecall",
        "canTransitionRun",
        "canTransitionToolCall",
        "checkpointIdOf",
        "computeCost",
        "createExecuteCommandTool",
        "createFilesystemToolset",
        "createMemoryToolset",
        "createSandboxProvider",
        "createSetEnvTool",
        "createShellExecTool",
        "createSkillsToolset",
        "defineAgent",
        "defineTool",
        "expandEnv",
        "formatConfigError",
        "getLogger",
        "getPlugin",
        "isBackgroundTool",
        "isBatchTool",
        "isChunk",
        "isLanguageModel",
        "isMemoryStore",
        "isPluginRef",
        "isRetryable",
        "isStreamingTool",
        "isToolset",
        "listPlugins",
        "loadConfig",
        "loadPlugin",
        "memoryWriteModeOf",
        "nearMatch",
        "offloadLargeOutput",
        "parseCheckpointId",
        "parseConfig",
        "rankByTokenOverlap",
        "recallFrom",
        "registerPlugin",
        "resolvePricing",
        "runAgent",
        "runAgentDetailed",
        "runStatusOf",
        "sessionShellEnv",
        "setLogger",
        "similarityRatio",
        "splitCommandLine",
        "stopReasonOf",
        "streamAgent",
        "summarizePayload",
        "summarizeToolPhase",
        "summarizeValue",
        "toErrorDetails",
        "tokenize",
        "transitionRun",
        "transitionToolCall",
        "unregisterPlugin",
      ]
    `);
  });

  it("keel/testing", () => {
    expect(Object.keys(testing).sort()).toMatchInlineSnapshot(`
      [
        "ScriptedModel",
        "scriptedModel",
      ]
    `);
  });

  it("keel/testing/conformance", async () => {
    const conformance = await import("../src/testing/conformance.js");
    expect(Object.keys(conformance).sort()).toEqual([
      "describeContextAssemblerConformance",
      "describeEventBusConformance",
      "describeHostTransportConformance",
      "describeLanguageModelConformance",
      "describeMemoryConformance",
      "describeSessionManagerConformance",
      "describeSkillsManagerConformance",
      "describeToolExecutorConformance",
    ]);
  });

  it("keel/ai-sdk", async () => {
    const aiSdk = await import("../src/models/providers/ai-sdk/index.js");
    expect(Object.keys(aiSdk).sort()).toEqual(["fromAiSdk"]);
  });

  it("keel/stores/postgres", async () => {
    const postgres = await import("../src/stores/postgres/index.js");
    expect(Object.keys(postgres).sort()).toEqual([
      "DEFAULT_POSTGRES_URL",
      "POSTGRES_MIGRATIONS",
      "POSTGRES_STORE_CONFIG",
      "PostgresSessionManager",
      "migrate",
      "registerPostgresStore",
      "resolveConnectionString",
    ]);
  });

  it("keel/server", async () => {
    const server = await import("../src/server/index.js");
    expect(Object.keys(server).sort()).toEqual([
      "ServerRequestError",
      "createAgUiApp",
      "createKeelApp",
      "createKeelHandler",
      "createUiMessageStreamApp",
      "serveKeel",
    ]);
  });

  it("keel/host", async () => {
    const host = await import("../src/host/index.js");
    expect(Object.keys(host).sort()).toMatchInlineSnapshot(`
      [
        "AGENT_API_ERROR_CODES",
        "ActionCallError",
        "ActionCallTimeoutError",
        "ActionChannel",
        "ActionRequestSchema",
        "ActionResponseSchema",
        "AgentApiError",
        "AgentApiErrorSchema",
        "AgentBindingSchema",
        "AgentEventEnvelopeSchema",
        "AgentRunContextSchema",
        "AgentRunnerCapabilitiesSchema",
        "AgentRunnerContextPolicySchema",
        "AgentRunnerManifestSchema",
        "AgentRunnerPermissionsSchema",
        "CHANNEL_ERROR_CODES",
        "CHUNK_STATUS",
        "ChannelBusyError",
        "ChannelClosedError",
        "DEFAULT_RUN_TIMEOUT_SECONDS",
        "DEFAULT_TRANSPORT_LIMITS",
        "HostRunApi",
        "InMemoryAuditLog",
        "KeelHost",
        "KeelRunner",
        "MessageTooLargeError",
        "PROTOCOL_VERSION",
        "PROXY_ACTIONS",
        "RESULT_TYPES",
        "RUNNER_ACTIONS",
        "RUN_FAILURE_CODES",
        "STATE_SCOPES",
        "STDIO_CHUNK_BYTES",
        "SUSPENDED_RUN_KEY",
        "TransportClosedError",
        "TransportLimitError",
        "WEBSOCKET_CHUNK_BYTES",
        "createInMemoryHostStores",
        "createInMemoryTransportPair",
        "createPostgresHostStores",
        "createStdioTransport",
        "createWebSocketTransport",
        "discoverRunners",
        "formatRunnerId",
        "fromWireMessages",
        "isCompatibleProtocolVersion",
        "listenKeelRunner",
        "manifestForProfile",
        "parseActionFrame",
        "parseRunResult",
        "parseRunnerId",
        "partsOfWireChunk",
        "serveKeelRunner",
        "splitUtf8",
        "toWireFunctions",
        "toWireMessages",
        "webSocketMaxPayload",
      ]
    `);
  });

  it("package.json exports the built entries and the bin", async () => {
    const { default: manifest } = await import("../package.json", { with: { type: "json" } });
    expect(Object.keys(manifest.exports)).toEqual([
      ".",
      "./testing",
      "./testing/conformance",
      "./ai-sdk",
      "./stores/postgres",
      "./server",
      "./host",
      "./package.json",
    ]);
    expect(manifest.bin).toEqual({ keel: "./dist/cli/main.js" });
    expect(manifest.type).toBe("module");
    expect(manifest.engines.node).toBe(">=20.19");
  });
});
