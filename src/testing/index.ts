/**
 * Test helpers for Keel and for code built on it: the scripted model. It loads nothing of a test runner, so an
 * application's own code may use it; the seam conformance suites, which need vitest, are `keel/testing/conformance`.
 */
export {
  ScriptedModel,
  type ScriptedModelOptions,
  scriptedModel,
} from "../models/providers/mock/scripted-model.js";
export type { ScriptedToolCall, ScriptedTurn, ScriptStep } from "../models/providers/mock/scripted-turn.js";
