/** Test helpers for Keel and for code built on it: the scripted model and the seam conformance suites. */
export {
  ScriptedModel,
  type ScriptedModelOptions,
  scriptedModel,
} from "../models/providers/mock/scripted-model.js";
export type { ScriptedToolCall, ScriptedTurn, ScriptStep } from "../models/providers/mock/scripted-turn.js";
export {
  type ContextAssemblerBounds,
  type ContextAssemblerConformanceOptions,
  describeContextAssemblerConformance,
} from "./context-assembler-conformance.js";
export { describeEventBusConformance, type EventBusConformanceOptions } from "./event-bus-conformance.js";
export {
  describeLanguageModelConformance,
  type LanguageModelConformanceScenarios,
} from "./language-model-conformance.js";
export { describeMemoryConformance, type MemoryConformanceOptions } from "./memory-conformance.js";
export {
  describeSessionManagerConformance,
  type SessionManagerConformanceOptions,
} from "./session-manager-conformance.js";
export {
  describeSkillsManagerConformance,
  type SkillFixture,
  type SkillsManagerConformanceOptions,
} from "./skills-manager-conformance.js";
export {
  describeToolExecutorConformance,
  type ToolExecutorConformanceOptions,
} from "./tool-executor-conformance.js";
