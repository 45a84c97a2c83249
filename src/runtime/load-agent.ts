import { createHash } from "node:crypto";
import path from "node:path";
import type { PatternFactory } from "../builtins/builtin-patterns.js";
import type { AgentDefinition } from "../config/app-config-schema.js";
import type { ContextAssembler } from "../context/context-assembler.js";
import type { Hook } from "../contracts/hook.js";
import type { LanguageModel, ModelToolSpec } from "../contracts/language-model.js";
import { DEFAULT_EXECUTION_SPEC, type Tool, type ToolExecutor } from "../contracts/tool.js";
import { ConfigError } from "../errors/error-classes.js";
import { getLogger } from "../logging/logger.js";
import { PhaseHooks } from "../loop/phase-hooks.js";
import type { ResolvedAgent } from "../loop/resolved-agent.js";
import { createStopConditions, type StopConditionSpec } from "../loop/stop-conditions.js";
import type { Memory } from "../memory/memory.js";
import { loadMiddleware } from "../middleware/load-middleware.js";
import { loadModel } from "../models/load-model.js";
import type { Pattern } from "../patterns/pattern.js";
import {
  computeEffectivePolicy,
  declarationOf,
  type EffectivePolicy,
  type PolicyInput,
} from "../permissions/effective-policy.js";
import { isPluginRef, loadPlugin } from "../plugins/load-plugin.js";
import { DEFAULT_LARGE_OUTPUT_BYTES } from "../run-folders/large-output.js";
import { toolsOfEntry } from "../tools/toolset.js";
import { memoryWriteModeOf } from "../toolsets/memory/memory-toolset.js";

export interface LoadAgentOptions {
  baseDir: string;
  /** `runtime.config.tool_executor` / `context_assembler`: defaults for agents that name none. */
  defaults?: { toolExecutor?: unknown; contextAssembler?: unknown };
  /** The runtime the agent runs in, for tools that run other agents. */
  runtime?: unknown;
}

/** Build everything a run needs of an agent from its definition, loading each plugin once. */
export async function loadAgent(
  definition: AgentDefinition,
  options: LoadAgentOptions,
): Promise<ResolvedAgent> {
  const { baseDir } = options;
  const label = `agents[${definition.id}]`;
  const {
    model,
    options: modelOptions,
    pricing,
  } = await loadModel(definition.llm as Parameters<typeof loadModel>[0]);
  // Memory first: the memory toolset recalls (and in `external` mode writes) through it.
  const memory = await loadPlugin<Memory>("memory", definition.memory, {
    baseDir,
    label: `${label}.memory`,
    requiredMethods: ["inject", "writeback", "retrieve"],
  });
  const tools: Record<string, Tool> = {};
  const toolsets: Record<string, string> = {};
  const agent = {
    id: definition.id,
    sandbox: definition.sandbox,
    permissions: definition.permissions,
    memory,
  };
  for (const entry of definition.tools) {
    if (isPluginRef(entry)) {
      const ref = entry as { id: string; enabled?: boolean };
      if (ref.enabled === false) continue;
      const entryLabel = `${label}.tools[${ref.id}]`;
      const loaded = await loadPlugin("tool", entry, {
        baseDir,
        label: entryLabel,
        runtime: options.runtime,
        agent,
        id: ref.id,
      });
      // A toolset contributes several tools under their own names.
      for (const [name, tool] of toolsOfEntry(loaded, ref.id, entryLabel)) {
        if (name in tools) {
          throw new ConfigError(`${entryLabel}: a tool named '${name}' is already loaded`, {
            hint: "Tool names must be unique within an agent; drop one of the entries or narrow a toolset's tools",
          });
        }
        tools[name] = normalizeTool(tool, name);
        toolsets[name] = ref.id;
      }
    } else {
      const tool = entry as Tool;
      tools[tool.name] = normalizeTool(tool, tool.name);
    }
  }
  const toolExecutor = await loadPlugin<ToolExecutor>(
    "tool_executor",
    definition.tool_executor ?? options.defaults?.toolExecutor ?? { type: "safe" },
    // The agent's sandbox reaches the executor too (`filesystem_aware` checks paths against it).
    { baseDir, label: `${label}.tool_executor`, requiredMethods: ["execute"], agent },
  );
  const contextAssembler = await loadPlugin<ContextAssembler>(
    "context_assembler",
    definition.context_assembler ?? options.defaults?.contextAssembler ?? { type: "passthrough" },
    { baseDir, label: `${label}.context_assembler`, requiredMethods: ["assemble"] },
  );
  const createPattern = await loadPatternFactory(definition.pattern, baseDir, `${label}.pattern`);
  const hooks: Hook[] = [];
  for (const [index, entry] of definition.hooks.entries()) {
    hooks.push(await loadPlugin<Hook>("hook", entry, { baseDir, label: `${label}.hooks[${index}]` }));
  }
  const middleware = await loadMiddleware(definition.middleware, {
    baseDir,
    label,
    runtime: options.runtime,
  });
  const memoryWriteMode = memoryWriteModeOf(Object.values(tools));
  const toolSpecs: ModelToolSpec[] = Object.entries(tools).map(([name, tool]) => ({
    name,
    description: tool.description,
    inputSchema: tool.schema(),
  }));
  const policyInput: PolicyInput = {
    agentId: definition.id,
    permissions: definition.permissions,
    sandbox: definition.sandbox,
    tools: Object.fromEntries(
      Object.entries(tools).map(([name, tool]) => [name, declarationOf(tool.executionSpec())]),
    ),
  };
  const policy = computeEffectivePolicy(policyInput);
  warnToolsNeverAllowed(definition.id, policy);
  const patternName =
    (definition.pattern as { type?: string; impl?: string }).type ??
    (definition.pattern as { impl?: string }).impl;
  return {
    id: definition.id,
    name: definition.name,
    instructions: definition.instructions,
    model,
    modelOptions,
    pricing,
    tools,
    preflightTools: Object.entries(tools).filter(([, tool]) => typeof tool.preflight === "function"),
    toolSpecs,
    toolExecutor,
    hooks: new PhaseHooks(hooks),
    middleware,
    memory,
    contextAssembler,
    createPattern,
    stopConditions: createStopConditions(definition.stop_conditions as StopConditionSpec[]),
    limits: {
      maxSteps: definition.runtime.max_steps,
      stepTimeoutMs: definition.runtime.step_timeout_ms,
      sessionQueueSize: definition.runtime.session_queue_size,
      eventQueueSize: definition.runtime.event_queue_size,
      storeOutageMs: definition.durable.store_outage_ms,
    },
    memoryOnError: (definition.memory as { on_error?: "continue" | "fail" }).on_error ?? "continue",
    toolsets,
    ...(memoryWriteMode === undefined ? {} : { memoryWriteMode }),
    largeOutputBytes: definition.sandbox?.large_output_bytes ?? DEFAULT_LARGE_OUTPUT_BYTES,
    ...runFoldersOf(definition.runtime.run_folders, baseDir),
    ...(definition.output_type === undefined ? {} : { outputType: definition.output_type }),
    fingerprint: fingerprint(model, patternName ?? "react", toolSpecs),
    policy,
    policyInput,
  };
}

/**
 * A tool the agent is configured with but may never run — a shell tool without `permissions.enable: ["shell"]`,
 * say — is almost always a forgotten line of config; the run would only find out at the first call.
 */
function warnToolsNeverAllowed(agentId: string, policy: EffectivePolicy): void {
  for (const [toolId, verdict] of Object.entries(policy.tools)) {
    const capability = CAPABILITY_NOT_ENABLED.exec(verdict.rule)?.[1];
    if (verdict.effect !== "deny" || capability === undefined) continue;
    getLogger().warn(
      `agent '${agentId}': tool '${toolId}' is refused on every call: it needs "permissions": ` +
        `{ "enable": ["${capability}"] } in the agent's config`,
    );
  }
}

const CAPABILITY_NOT_ENABLED = /^(destructive|shell|network)_not_enabled$/;

/**
 * A tool keyed by its config id; a tool built outside Keel gets the defaults it lacks: an empty object schema,
 * and the default execution spec under whatever part of one it gives.
 */
function normalizeTool(tool: Tool, id: string): Tool {
  if (typeof tool.invoke !== "function") {
    throw new ConfigError(`Tool '${id}' has no invoke() method`, {
      hint: "Build tools with defineTool() or extend BaseTool",
    });
  }
  const hasSchema = typeof tool.schema === "function";
  const original = typeof tool.executionSpec === "function" ? tool.executionSpec.bind(tool) : undefined;
  const sample = original?.();
  const completeSpec = sample !== undefined && SPEC_KEYS.every((key) => key in sample);
  if (hasSchema && completeSpec) return tool;
  const normalized = Object.create(tool) as Tool & {
    schema: Tool["schema"];
    executionSpec: Tool["executionSpec"];
  };
  if (!hasSchema) normalized.schema = () => ({ type: "object", properties: {} });
  if (!completeSpec) normalized.executionSpec = () => ({ ...DEFAULT_EXECUTION_SPEC, ...original?.() });
  return normalized;
}

const SPEC_KEYS = Object.keys(DEFAULT_EXECUTION_SPEC) as (keyof typeof DEFAULT_EXECUTION_SPEC)[];

async function loadPatternFactory(ref: unknown, baseDir: string, label: string): Promise<() => Pattern> {
  const loaded = await loadPlugin<PatternFactory | Pattern | (new () => Pattern)>("pattern", ref, {
    baseDir,
    label,
  });
  if (typeof loaded === "function") {
    if (/^class[\s{]/.test(Function.prototype.toString.call(loaded))) {
      const PatternClass = loaded as new () => Pattern;
      return () => new PatternClass();
    }
    return loaded as PatternFactory;
  }
  if (typeof (loaded as Pattern).execute !== "function") {
    throw new ConfigError(`${label}: a pattern needs setup() and execute()`, {
      hint: "Extend BasePattern and implement react()",
    });
  }
  // A pattern object is shared by the agent's runs: fine for stateless ones, so long as setup() rebinds it.
  return () => loaded as Pattern;
}

/** Tools, pattern and model: what a checkpoint must match to be resumed by this agent. */
function fingerprint(model: LanguageModel, pattern: string, tools: readonly ModelToolSpec[]): string {
  const hash = createHash("sha256");
  hash.update(`${model.provider}:${model.modelId}\n${pattern}\n`);
  for (const tool of [...tools].sort((a, b) => a.name.localeCompare(b.name))) {
    hash.update(`${tool.name}:${JSON.stringify(tool.inputSchema)}\n`);
  }
  return hash.digest("hex").slice(0, 16);
}

/** `runtime.run_folders` as the root run folders are made under (decision 0007). */
function runFoldersOf(
  option: boolean | { root_dir?: string | undefined } | undefined,
  baseDir: string,
): { runFolders?: { rootDir: string } } {
  if (option === undefined || option === false) return {};
  const rootDir = option === true || option.root_dir === undefined ? baseDir : option.root_dir;
  return { runFolders: { rootDir: path.resolve(baseDir, rootDir) } };
}
