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
        "BudgetExhausted",
        "ConcurrentBatchToolExecutor",
        "ConfigError",
        "ConfigLoadError",
        "ConfigValidationError",
        "DEFAULT_EXECUTION_SPEC",
        "DEFAULT_FILESYSTEM_TOOLS",
        "DEFAULT_SANDBOX_LIMITS",
        "DecisionError",
        "DefaultRuntime",
        "ERROR_CODES",
        "EVENT_SCHEMAS",
        "EchoModel",
        "FILESYSTEM_TOOL_NAMES",
        "FileLoggingEventBus",
        "IllegalTransitionError",
        "InMemorySessionManager",
        "KeelError",
        "LLMConnectionError",
        "LLMRateLimitError",
        "LLMResponseError",
        "LocalSkillsManager",
        "MODEL_SPECIFICATION_VERSION",
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
        "RunNotCompletedError",
        "RunStreamChunkKind",
        "Runtime",
        "RuntimeEvent",
        "SafeToolExecutor",
        "Sandbox",
        "SandboxError",
        "SessionQueueFullError",
        "SuspendToolCall",
        "ToolAuthError",
        "ToolCancelledError",
        "ToolError",
        "ToolRateLimitError",
        "ToolTimeoutError",
        "ToolUnavailableError",
        "ToolValidationError",
        "VERSION",
        "agentAsTool",
        "approximateTokens",
        "canTransitionRun",
        "canTransitionToolCall",
        "checkpointIdOf",
        "computeCost",
        "createFilesystemToolset",
        "createSandboxProvider",
        "defineTool",
        "expandEnv",
        "formatConfigError",
        "fromAiSdk",
        "getContextAssembler",
        "getEventBus",
        "getHook",
        "getLogger",
        "getMemory",
        "getMiddleware",
        "getPattern",
        "getRuntime",
        "getSession",
        "getSkills",
        "getTool",
        "getToolExecutor",
        "isBackgroundTool",
        "isBatchTool",
        "isLanguageModel",
        "isPluginRef",
        "isRetryable",
        "isStreamingTool",
        "isToolset",
        "listContextAssemblers",
        "listEventBuses",
        "listHooks",
        "listMemories",
        "listMiddleware",
        "listPatterns",
        "listRuntimes",
        "listSessions",
        "listSkills",
        "listToolExecutors",
        "listTools",
        "loadConfig",
        "loadPlugin",
        "nearMatch",
        "parseCheckpointId",
        "parseConfig",
        "registerContextAssembler",
        "registerEventBus",
        "registerHook",
        "registerMemory",
        "registerMiddleware",
        "registerPattern",
        "registerRuntime",
        "registerSession",
        "registerSkills",
        "registerTool",
        "registerToolExecutor",
        "resolvePricing",
        "runAgent",
        "runAgentDetailed",
        "runStatusOf",
        "setLogger",
        "similarityRatio",
        "stopReasonOf",
        "streamAgent",
        "summarizeToolPhase",
        "toErrorDetails",
        "transitionRun",
        "transitionToolCall",
      ]
    `);
  });

  it("keel/testing", () => {
    expect(Object.keys(testing).sort()).toMatchInlineSnapshot(`
      [
        "ScriptedModel",
        "describeSessionManagerConformance",
        "scriptedModel",
      ]
    `);
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

  it("package.json exports the built entries and the bin", async () => {
    const { default: manifest } = await import("../package.json", { with: { type: "json" } });
    expect(Object.keys(manifest.exports)).toEqual([".", "./testing", "./stores/postgres", "./package.json"]);
    expect(manifest.bin).toEqual({ keel: "./dist/cli/main.js" });
    expect(manifest.type).toBe("module");
    expect(manifest.engines.node).toBe(">=20.19");
  });
});
