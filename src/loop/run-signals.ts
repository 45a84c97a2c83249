import type { TerminationReason } from "../contracts/run-types.js";
import type { KeelError } from "../errors/keel-error.js";

/**
 * Thrown through a pattern to end the run with a termination (a stop condition, a block, a budget, a
 * cancellation, a suspension). Not an error: the loop turns it into the run's result.
 */
export class TerminateRun {
  constructor(
    readonly termination: TerminationReason,
    /** The error the result reports, when the termination is a failure. */
    readonly error?: KeelError,
  ) {}
}

export function isTerminateRun(value: unknown): value is TerminateRun {
  return value instanceof TerminateRun;
}
