import { ERROR_CODES } from "../errors/error-codes.js";

const BRAND = Symbol.for("keel.middlewareTermination");

export interface MiddlewareTerminationOptions {
  /** The result to end with; when absent (`undefined`), `ctx.result` is. */
  result?: unknown;
  message?: string;
}

/**
 * Thrown from middleware to stop. From function middleware, the call's result (this `result`, else
 * `ctx.result`) is recorded as the tool's result and the run ends `completed` (termination
 * `behavior_requested`, value `middleware`) with no further model call. From agent or chat middleware, the
 * chain returns `ctx.result` (this `result` when given). Not a failure: it never becomes a run's error.
 *
 * @example
 * const stopAfterPayment: FunctionMiddleware = async (ctx, next) => {
 *   await next();
 *   if (ctx.toolId === "pay") throw new MiddlewareTermination({ result: ctx.result });
 * };
 */
export class MiddlewareTermination extends Error {
  readonly code = ERROR_CODES.MIDDLEWARE_TERMINATED;
  readonly result: unknown;
  readonly [BRAND] = true;

  constructor(options: MiddlewareTerminationOptions = {}) {
    super(options.message ?? "Middleware ended the chain");
    this.name = "MiddlewareTermination";
    this.result = options.result;
  }

  /** Whether it carries a result of its own. */
  get hasResult(): boolean {
    return this.result !== undefined;
  }

  /** True for a termination, also one made by another copy of the package. */
  static isInstance(value: unknown): value is MiddlewareTermination {
    return typeof value === "object" && value !== null && (value as { [BRAND]?: boolean })[BRAND] === true;
  }
}
