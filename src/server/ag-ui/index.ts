export { AgUiInputError } from "./ag-ui-input-error.js";
export {
  interruptId,
  parseInterruptId,
  resumedRunId,
  resumeToDecisions,
  toInterrupt,
} from "./ag-ui-interrupts.js";
export { AgUiTranslator, type AgUiTranslatorOptions } from "./ag-ui-translator.js";
export type {
  AgUiEvent,
  AgUiInterrupt,
  AgUiMessage,
  AgUiProfile,
  AgUiResumeEntry,
  RunAgentInput,
} from "./ag-ui-types.js";
export { AG_UI_PROFILES } from "./ag-ui-types.js";
export { type AgUiAppOptions, createAgUiApp } from "./create-ag-ui-app.js";
export { lastUserText, parseRunAgentInput } from "./run-agent-input.js";
