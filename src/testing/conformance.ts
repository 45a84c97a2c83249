/**
 * The seam conformance suites (`keel/testing/conformance`): each registers vitest tests that an implementation of
 * the seam must pass. A separate entry from `keel/testing`, because these import vitest and the scripted model
 * must load where vitest is not installed.
 */
export {
  type ContextAssemblerBounds,
  type ContextAssemblerConformanceOptions,
  describeContextAssemblerConformance,
} from "./context-assembler-conformance.js";
export { describeEventBusConformance, type EventBusConformanceOptions } from "./event-bus-conformance.js";
export {
  type ConnectedTransports,
  type ConnectTransports,
  describeHostTransportConformance,
} from "./host-transport-conformance.js";
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
