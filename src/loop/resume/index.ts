/**
 * Turning a stored run into a live one, in one place: reading and checking a checkpoint (`loadRunState`), deciding
 * whether a resume continues the run or branches a new one (`prepareResume`, `loadForResume`), checking decisions
 * against a suspended step (`loadSuspension`, `checkResumeDecisions`), and rebuilding the run's state in a driver
 * (`resumeInDriver`, `reloadCheckpoint`, `finishInterruptedStep`). The Runtime facade and the run loop import
 * this module and nothing under it (.dependency-cruiser.cjs enforces that).
 */
export { type LoadedRunState, loadRunState } from "./load-run-state.js";
export {
  loadForResume,
  type PreparedResume,
  prepareResume,
  type ResumeRequest,
  resumeSessionId,
} from "./prepare-resume.js";
export { checkResumeDecisions, loadSuspension, waitingResult } from "./resume-decisions.js";
export {
  type AssistantAnswer,
  finishInterruptedStep,
  type ResumePlan,
  reloadCheckpoint,
  restoreRun,
  resumeInDriver,
} from "./resume-run.js";
