import type { OutputType } from "../contracts/run-types.js";
import { ModelRetryError, OutputValidationError, type ValidationErrorInfo } from "../errors/error-classes.js";
import type { Pattern } from "../patterns/pattern.js";
import { toJsonSchema } from "../schema/to-json-schema.js";
import { formatIssues, validateWithSchema } from "../schema/validate-with-schema.js";
import type { RunDriver } from "./run-driver.js";
import { TerminateRun } from "./run-signals.js";

const VALIDATION_PREFIX = "The output did not match the expected schema:";

/** What a run's output must match, and how many times the pattern may run again until it does. */
export interface OutputCheck {
  outputType: OutputType | undefined;
  maxRetries: number;
}

/**
 * Run the pattern, validate its output against `outputType`, and run it again with the error in
 * `scratch.lastValidationError` until it passes or `maxValidationRetries` is spent. A pattern's
 * `ModelRetryError` counts against the same budget.
 */
export function executeWithValidation(
  pattern: Pattern,
  driver: RunDriver,
  check: OutputCheck,
): Promise<unknown> {
  // Without an output type a run usually needs no retry: hand back the pattern's own promise, so a run waiting
  // on a tool holds one suspended frame less (S3).
  if (check.outputType !== undefined) return new ValidatedRun(pattern, driver, check).attempt(0);
  return pattern.execute().catch((error: unknown) => {
    if (!(error instanceof ModelRetryError)) throw error;
    return new ValidatedRun(pattern, driver, check).retryAfter(error.message, 0);
  });
}

/** One run's attempts at an output that passes its check. */
class ValidatedRun {
  constructor(
    private readonly pattern: Pattern,
    private readonly driver: RunDriver,
    private readonly check: OutputCheck,
  ) {}

  async attempt(attempts: number): Promise<unknown> {
    const { outputType } = this.check;
    let message: string;
    try {
      const raw = await this.pattern.execute();
      if (outputType === undefined) return raw;
      const validation = await validateWithSchema(outputType, parseStructuredOutput(raw));
      if (validation.ok) return validation.value;
      message = `${VALIDATION_PREFIX}\n${formatIssues(validation.issues)}`;
    } catch (error) {
      if (!(error instanceof ModelRetryError)) throw error;
      message = error.message;
    }
    return this.retryAfter(message, attempts);
  }

  /** Record a failed attempt, and run the pattern again or end the run with `OutputValidationError`. */
  retryAfter(message: string, previousAttempts: number): Promise<unknown> {
    const { outputType, maxRetries } = this.check;
    const { driver } = this;
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
    return this.attempt(attempts);
  }
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
