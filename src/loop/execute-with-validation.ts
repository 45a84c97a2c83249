import type { OutputType } from "../contracts/run-types.js";
import { ModelRetryError, OutputValidationError, type ValidationErrorInfo } from "../errors/error-classes.js";
import type { Pattern } from "../patterns/pattern.js";
import { toJsonSchema } from "../schema/to-json-schema.js";
import { formatIssues, validateWithSchema } from "../schema/validate-with-schema.js";
import type { RunDriver } from "./run-driver.js";
import { TerminateRun } from "./run-signals.js";

const VALIDATION_PREFIX = "The output did not match the expected schema:";

/**
 * Run the pattern, validate its output against `outputType`, and run it again with the error in
 * `scratch.lastValidationError` until it passes or `maxValidationRetries` is spent. A pattern's
 * `ModelRetryError` counts against the same budget.
 */
export function executeWithValidation(
  pattern: Pattern,
  driver: RunDriver,
  outputType: OutputType | undefined,
  maxRetries: number,
): Promise<unknown> {
  // Without an output type a run usually needs no retry: hand back the pattern's own promise, so a run waiting
  // on a tool holds one suspended frame less (S3).
  if (outputType !== undefined) return attempt(pattern, driver, outputType, maxRetries, 0);
  return pattern.execute().catch((error: unknown) => {
    if (!(error instanceof ModelRetryError)) throw error;
    return retryAfter(error.message, pattern, driver, outputType, maxRetries, 0);
  });
}

async function attempt(
  pattern: Pattern,
  driver: RunDriver,
  outputType: OutputType | undefined,
  maxRetries: number,
  attempts: number,
): Promise<unknown> {
  let message: string;
  try {
    const raw = await pattern.execute();
    if (outputType === undefined) return raw;
    const validation = await validateWithSchema(outputType, parseStructuredOutput(raw));
    if (validation.ok) return validation.value;
    message = `${VALIDATION_PREFIX}\n${formatIssues(validation.issues)}`;
  } catch (error) {
    if (!(error instanceof ModelRetryError)) throw error;
    message = error.message;
  }
  return retryAfter(message, pattern, driver, outputType, maxRetries, attempts);
}

/** Record a failed attempt, and run the pattern again or end the run with `OutputValidationError`. */
function retryAfter(
  message: string,
  pattern: Pattern,
  driver: RunDriver,
  outputType: OutputType | undefined,
  maxRetries: number,
  previousAttempts: number,
): Promise<unknown> {
  const attempts = previousAttempts + 1;
  const info: ValidationErrorInfo = {
    attempt: attempts,
    message,
    expectedSchema: outputType ? describeSchema(outputType) : undefined,
  };
  if (attempts > maxRetries) {
    const error = new OutputValidationError(`${message}\n(after ${attempts} attempts)`, {
      outputType,
      attempts,
      lastValidationError: info,
      hint: "Describe the expected output in the agent's instructions, or raise budget.maxValidationRetries",
      context: { agentId: driver.ctx.agentId, sessionId: driver.ctx.sessionId, runId: driver.ctx.runId },
    });
    return Promise.reject(new TerminateRun({ type: "error", value: error.message }, error));
  }
  driver.ctx.scratch.lastValidationError = info;
  driver.emit("validation.retry", { attempt: attempts, error: message });
  return attempt(pattern, driver, outputType, maxRetries, attempts);
}

/** Model text that holds JSON (bare or in a fenced block) is parsed; anything else is validated as is. */
export function parseStructuredOutput(raw: unknown): unknown {
  if (typeof raw !== "string") return raw;
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(raw);
  const text = (fenced ? fenced[1]! : raw).trim();
  if (
    !(text.startsWith("{") || text.startsWith("[") || text === "null" || text === "true" || text === "false")
  ) {
    return raw;
  }
  try {
    return JSON.parse(text);
  } catch {
    return raw;
  }
}

function describeSchema(outputType: OutputType): unknown {
  try {
    return toJsonSchema(outputType, "output");
  } catch {
    return { vendor: outputType["~standard"].vendor };
  }
}
