import { agentIdOf, type RunRequest } from "../contracts/run-types.js";
import { ConfigError } from "../errors/error-classes.js";

/**
 * Refuse a request whose budget cannot be met: a step limit below 1 (or not a whole number) would end the run
 * `max_steps` before its first model call.
 */
export function checkRunRequest(request: RunRequest): void {
  const maxSteps = request.budget?.maxSteps;
  if (maxSteps === undefined || (Number.isInteger(maxSteps) && maxSteps >= 1)) return;
  throw new ConfigError(`budget.maxSteps must be a whole number of steps, 1 or more, got ${maxSteps}`, {
    hint: "budget.maxSteps is how many model steps this run may take: give 1 or more, or leave it out for the agent's runtime.max_steps",
    context: { agentId: agentIdOf(request.agentId), maxSteps },
  });
}
