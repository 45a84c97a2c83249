import {
  DEFAULT_EXECUTION_SPEC,
  type JsonSchema,
  type RunContext,
  type Tool,
  type ToolExecutionSpec,
} from "../contracts/tool.js";
import { ToolError } from "../errors/error-classes.js";
import { KeelError } from "../errors/keel-error.js";

/** Options of {@link UnreachableMcpTool}. */
export interface UnreachableMcpToolOptions {
  /** The config entry's id: the name the stand-in is loaded under. */
  id: string;
  /** The server as events and messages name it. */
  serverLabel: string;
  /** Why the server could not be reached while the agent loaded. */
  error: unknown;
  /** Try to reach the server again: connect and list its tools (and close what that opened). */
  probe(): Promise<void>;
  /** The server answers now: have the agent loaded again, so its next run gets the server's tools. */
  onReachable?(): void;
}

/**
 * What an `mcp` tools entry loads as when its server cannot be reached while the agent loads (a command that is
 * not on PATH, a server that exits at once, nothing listening on the URL). Loading the agent must not fail for
 * it: the spec has an MCP server's reachability checked by the tool's preflight, whose failure ends the run
 * `failed` before its loop with a typed error and a hint, so `runDetailed()` resolves, `run()` rejects with the
 * error and `stream()` ends with `run.finished`. The stand-in's preflight always fails, so the model never sees
 * it. The first preflight reports the load's own failure (no second wait for a server that just timed out);
 * later ones try the server again, and once it answers, ask for the agent to be loaded again — its tools are
 * only known from a listing — so a server that was merely late to start costs failed runs, not a restart.
 */
export class UnreachableMcpTool implements Tool {
  readonly name: string;
  readonly description: string;
  readonly durableIdempotent = false;
  private reported = false;
  private reachable = false;
  private closed = false;

  constructor(private readonly options: UnreachableMcpToolOptions) {
    this.name = options.id;
    this.description = `The tools of MCP server ${options.serverLabel}, which could not be reached`;
  }

  schema(): JsonSchema {
    return { type: "object", properties: {} };
  }

  executionSpec(): ToolExecutionSpec {
    return DEFAULT_EXECUTION_SPEC;
  }

  /** Not reached in a run (its preflight fails first); a direct call gets the same error. */
  invoke(): never {
    throw this.unreachableError(this.options.error);
  }

  async preflight(_ctx: RunContext): Promise<void> {
    if (!this.reported) {
      this.reported = true;
      throw this.unreachableError(this.options.error);
    }
    try {
      await this.options.probe();
    } catch (error) {
      throw this.unreachableError(error);
    }
    if (!this.reachable && !this.closed) {
      this.reachable = true;
      this.options.onReachable?.();
    }
    throw new ToolError(
      `MCP server ${this.options.serverLabel} could not be reached when the agent loaded; it answers now`,
      {
        hint: "The agent loads again with the server's tools on its next run; run it again",
        context: { toolId: this.options.id },
      },
    );
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private unreachableError(error: unknown): KeelError {
    if (KeelError.isInstance(error)) return error;
    return new ToolError(
      `MCP server ${this.options.serverLabel} did not list its tools: ${(error as Error)?.message ?? String(error)}`,
      {
        cause: error,
        retryable: true,
        hint: "Check the server's command, args and env (or its URL and headers) and that it is running",
        context: { toolId: this.options.id },
      },
    );
  }
}
