import type {
  AgentMiddlewareContext,
  ChatMiddlewareContext,
  FunctionMiddlewareContext,
  Middleware,
  MiddlewareFunction,
} from "../contracts/middleware.js";

/**
 * The middleware of one level, composed once per agent: the first is outermost. `length` is what the loop
 * branches on, so an agent without middleware pays a length check and nothing else.
 */
export class MiddlewareChain<Context> {
  readonly length: number;
  private readonly handlers: readonly MiddlewareFunction<Context>[];

  constructor(middleware: readonly Middleware<Context>[]) {
    this.handlers = middleware.map(toFunction);
    this.length = this.handlers.length;
  }

  /**
   * Run the chain around `callee`. Each `next()` runs the rest of the chain again, so a middleware that calls it
   * twice retries everything inside it; one that never calls it skips the callee. Errors, a
   * `MiddlewareTermination` included, reject the returned promise.
   */
  run(ctx: Context, callee: (ctx: Context) => Promise<void> | void): Promise<void> {
    const handlers = this.handlers;
    const dispatch = async (index: number): Promise<void> => {
      if (index === handlers.length) {
        await callee(ctx);
        return;
      }
      await handlers[index]!(ctx, () => dispatch(index + 1));
    };
    return dispatch(0);
  }
}

function toFunction<Context>(middleware: Middleware<Context>): MiddlewareFunction<Context> {
  if (typeof middleware === "function") return middleware;
  return (ctx, next) => middleware.process(ctx, next);
}

/** An agent's middleware by level, loaded and composed once (`load-agent.ts`). */
export interface MiddlewareStack {
  readonly agent: MiddlewareChain<AgentMiddlewareContext>;
  readonly chat: MiddlewareChain<ChatMiddlewareContext>;
  readonly function: MiddlewareChain<FunctionMiddlewareContext>;
}

/** The stack of an agent without middleware. */
export const NO_MIDDLEWARE: MiddlewareStack = Object.freeze({
  agent: new MiddlewareChain<AgentMiddlewareContext>([]),
  chat: new MiddlewareChain<ChatMiddlewareContext>([]),
  function: new MiddlewareChain<FunctionMiddlewareContext>([]),
});
