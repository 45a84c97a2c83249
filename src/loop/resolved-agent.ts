import type { ContextAssembler } from "../context/context-assembler.js";
import type { LanguageModel, ModelCallOptions, ModelToolSpec } from "../contracts/language-model.js";
import type { OutputType } from "../contracts/run-types.js";
import type { Tool, ToolExecutor } from "../contracts/tool.js";
import type { Memory } from "../memory/memory.js";
import type { MiddlewareStack } from "../middleware/middleware-chain.js";
import type { ModelPricing } from "../models/pricing.js";
import type { Pattern } from "../patterns/pattern.js";
import type { EffectivePolicy, PolicyInput } from "../permissions/effective-policy.js";
import type { MemoryWriteMode } from "../toolsets/memory/memory-toolset.js";
import type { PhaseHooks } from "./phase-hooks.js";
import type { StopConditionEvaluator } from "./stop-conditions.js";

/** Everything a run needs of its agent, built once per agent and shared by its runs. */
export interface ResolvedAgent {
  readonly id: string;
  readonly name: string;
  readonly instructions: string | undefined;
  readonly model: LanguageModel;
  readonly modelOptions: ModelCallOptions;
  readonly pricing: ModelPricing;
  readonly tools: Readonly<Record<string, Tool>>;
  /** The tools with a `preflight`, run once per session before its first turn. */
  readonly preflightTools: readonly (readonly [string, Tool])[];
  /** The tools as the model sees them, computed once. */
  readonly toolSpecs: readonly ModelToolSpec[];
  readonly toolExecutor: ToolExecutor;
  readonly hooks: PhaseHooks;
  /** Middleware by level, composed once; a level without any has length 0 and costs a length check. */
  readonly middleware: MiddlewareStack;
  readonly memory: Memory;
  readonly contextAssembler: ContextAssembler;
  readonly createPattern: () => Pattern;
  readonly stopConditions: StopConditionEvaluator;
  readonly limits: {
    readonly maxSteps: number;
    readonly stepTimeoutMs: number;
    readonly sessionQueueSize: number;
    readonly eventQueueSize: number;
    /** How long a durable run waits out its store not answering (`durable.store_outage_ms`). */
    readonly storeOutageMs: number;
  };
  readonly memoryOnError: "continue" | "fail";
  /** Tool name → the config entry (toolset) id it was loaded from; tools given as code are absent. */
  readonly toolsets?: Readonly<Record<string, string>>;
  /** The memory toolset's write mode, logged when a run starts; absent without memory tools. */
  readonly memoryWriteMode?: MemoryWriteMode;
  /** `sandbox.large_output_bytes`; absent: 16 KiB. */
  readonly largeOutputBytes?: number;
  /** Run folders: where `runs/<run-id>/` is made for each run; absent: no run folders. */
  readonly runFolders?: { readonly rootDir: string };
  /**
   * The effective permission policy without loaded skills, and what it was computed from, so a run
   * whose session loaded skills recomputes it. Absent for an agent assembled outside `loadAgent`: no policy.
   */
  readonly policy?: EffectivePolicy;
  readonly policyInput?: PolicyInput;
  /** The definition's `output_type`: a run's output type when its request gives none. */
  readonly outputType?: OutputType;
  /** Identifies tools, pattern and model, so a checkpoint of another agent shape is refused. */
  readonly fingerprint: string;
}
