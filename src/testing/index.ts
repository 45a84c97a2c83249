/** Test helpers for Keel and for code built on it: the scripted model and the seam conformance suites. */
export {
  ScriptedModel,
  type ScriptedModelOptions,
  scriptedModel,
} from "../models/providers/mock/scripted-model.js";
export type { ScriptedToolCall, ScriptedTurn, ScriptStep } from "../models/providers/mock/scripted-turn.js";
export {
  describeSessionManagerConformance,
  type SessionManagerConformanceOptions,
} from "./session-manager-conformance.js";
