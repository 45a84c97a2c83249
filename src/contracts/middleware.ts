import type { ModelResponse } from "./hook.js";
import type { ModelCallOptions, ModelRequest, ModelToolSpec } from "./language-model.js";
import type { Message } from "./message.js";
import type { RunRequest, RunResult } from "./run-types.js";
import type { Tool, ToolContext } from "./tool.js";

/** The three places middleware wraps: one run, one model call, one tool call. */
export type MiddlewareLevel = "agent" | "chat" | "function";

export const MIDDLEWARE_LEVELS: readonly MiddlewareLevel[] = Object.freeze(["agent", "chat", "function"]);

/**
 * Calls the rest of the chain: the next middleware, or what the chain wraps. Takes no arguments — what the
 * callee sees is what the middleware left on the context — and may be called more than once (a retry).
 */
export type Next = () => Promise<void>;

/**
 * `(ctx, next) => …`: work before `next()` is pre-processing, reading `ctx.result` after it post-processing.
 * Written as a method's type so that middleware typed for a run's `deps` fits the config's untyped lists.
 */
export type MiddlewareFunction<Context> = {
  handle(ctx: Context, next: Next): Promise<void> | void;
}["handle"];

/** Middleware as an object, for middleware that keeps settings or state. */
export interface MiddlewareObject<Context> {
  process(ctx: Context, next: Next): Promise<void> | void;
}

export type Middleware<Context> = MiddlewareFunction<Context> | MiddlewareObject<Context>;

/** Wraps one run: its request before `next()`, its `RunResult` after. `TDeps` types `request.deps`. */
export type AgentMiddleware<TDeps = unknown> = Middleware<AgentMiddlewareContext<TDeps>>;
/** Wraps one model call, on every step: the model request before `next()`, the model's response after. */
export type ChatMiddleware = Middleware<ChatMiddlewareContext>;
/**
 * Wraps one tool call between BeforeToolExecute and the executor: its arguments before, its result after.
 * `TDeps` types `ctx.deps`.
 */
export type FunctionMiddleware<TDeps = unknown> = Middleware<FunctionMiddlewareContext<TDeps>>;
/** Middleware of any level, as a registered factory returns it. */
export type AnyMiddleware = AgentMiddleware | ChatMiddleware | FunctionMiddleware;

/** A session as middleware sees it: `state` is the run's `ctx.state`, the same object. */
export interface MiddlewareSession {
  readonly id: string;
  readonly state: Record<string, unknown>;
}

/**
 * What agent middleware sees: one run of the agent. `result` is the run's `RunResult`: after `next()` it is the
 * result the run produced; middleware may replace it. Set without calling `next()`, the run body (RunStart
 * through RunEnd) never runs and the value set is the run's result. A partial value is completed: missing
 * fields take the run's ids, usage and artifacts, `termination` defaults to
 * `{type: "behavior_requested", value: "middleware"}` (stop reason `completed`) and `finalOutput` to null —
 * spread `ctx.result` to keep what the run produced: `ctx.result = {...ctx.result, finalOutput: redact(…)}`.
 */
export interface AgentMiddlewareContext<TDeps = unknown> {
  readonly agentId: string;
  readonly runId: string;
  readonly sessionId: string;
  /** The run continues from a checkpoint (a resume or a decision) rather than starting from its input. */
  readonly resumed: boolean;
  /**
   * The run's request, this run's own copy: change its fields before `next()` (input, budget, metadata, deps,
   * either kwargs bucket). `runId`, `sessionId` and `agentId` cannot be changed.
   */
  readonly request: RunRequest<unknown, TDeps>;
  /** `request.inputText`. */
  input: string;
  /** `request.functionInvocationKwargs` (made empty on first read): for tools and function middleware. */
  functionInvocationKwargs: Record<string, unknown>;
  /** `request.clientKwargs` (made empty on first read): for the model client and chat middleware. */
  clientKwargs: Record<string, unknown>;
  readonly session: MiddlewareSession;
  /** Shared by the agent middleware of this run. */
  readonly metadata: Record<string, unknown>;
  get result(): RunResult | undefined;
  set result(value: Partial<RunResult> | undefined);
}

/**
 * What chat middleware sees: one model call. `request` is what the model receives — change `messages`, `tools`
 * or `options` (or `request.system`, `request.toolChoice`) before `next()`; replace `messages` rather than push
 * onto it, as it is the run's transcript. `kwargs` is this call's copy of the run's `clientKwargs`; what it holds
 * when the model is called is the request's `clientKwargs`. `result` is the model's response after `next()`;
 * a partial value is completed (no tool calls, stop reason from them, the agent's model id).
 */
export interface ChatMiddlewareContext {
  readonly agentId: string;
  readonly runId: string;
  readonly sessionId: string;
  readonly step: number;
  readonly request: ModelRequest;
  /** `request.messages`. */
  messages: readonly Message[];
  /** `request.tools`. */
  tools: readonly ModelToolSpec[] | undefined;
  /** `request.options`. */
  options: ModelCallOptions;
  /** The run's `clientKwargs`, copied for this call; never `functionInvocationKwargs`. */
  kwargs: Record<string, unknown>;
  readonly session: MiddlewareSession;
  /** Shared by the chat middleware of this call. */
  readonly metadata: Record<string, unknown>;
  get result(): ModelResponse | undefined;
  set result(value: Partial<ModelResponse> | undefined);
}

/**
 * What function middleware sees: one tool call, after its gate and BeforeToolExecute. It is the tool's own
 * context — the object the tool receives as its second argument. `arguments` changed before `next()` are
 * validated against the tool's schema again; invalid ones make `next()` throw a `tool.validation` error.
 * `kwargs` is this call's copy of the run's `functionInvocationKwargs`; the tool sees what it holds. `metadata`
 * holds `callId` and is shared along the chain, with the executor and the tool. `result` is the tool's result
 * after `next()`; a failed execution makes `next()` throw the tool's error instead.
 */
export interface FunctionMiddlewareContext<TDeps = unknown> extends ToolContext<TDeps> {
  readonly tool: Tool;
  arguments: Record<string, unknown>;
  kwargs: Record<string, unknown>;
  result: unknown;
}

/** Middleware given in code: a `(ctx, next)` function or an object with `process(ctx, next)`. */
export function isMiddleware(value: unknown): value is AnyMiddleware {
  if (typeof value === "function") return true;
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { process?: unknown }).process === "function"
  );
}
