import { type EventBus, RuntimeEvent } from "../contracts/runtime-event.js";
import type { RunContext, ToolContext } from "../contracts/tool.js";
import type { McpToolsetOptions } from "./mcp-toolset-options.js";

/** Who a `tool.mcp.*` event belongs to, and where it goes. */
export interface McpEventIds {
  runId?: string;
  sessionId?: string;
  agentId?: string;
  eventBus?: EventBus;
  /** The run's numbered log, when the event belongs to a call or a preflight of a run. */
  record?: (kind: string, payload: Record<string, unknown>) => void;
}

export function eventIdsOf(ctx: Partial<RunContext> & Pick<Partial<ToolContext>, "emitEvent">): McpEventIds {
  const ids: McpEventIds = {};
  if (typeof ctx.emitEvent === "function") ids.record = ctx.emitEvent.bind(ctx);
  if (ctx.runId !== undefined) ids.runId = ctx.runId;
  if (ctx.sessionId !== undefined) ids.sessionId = ctx.sessionId;
  if (ctx.agentId !== undefined) ids.agentId = ctx.agentId;
  if (ctx.eventBus !== undefined) ids.eventBus = ctx.eventBus;
  return ids;
}

/** What an event says of an error: its class and code, never its message (which may quote arguments). */
export function errorCode(error: unknown): string {
  const name = (error as Error)?.name ?? typeof error;
  const code = (error as { code?: unknown })?.code;
  return code === undefined ? name : `${name} ${String(code)}`;
}

/** Where an MCP toolset's `tool.mcp.*` events go. */
export class McpEvents {
  constructor(private readonly fallback: McpToolsetOptions["eventBus"]) {}

  /**
   * A `tool.mcp.*` event: in the run's numbered log when it happens within a run's call or preflight, else (a
   * connect while loading, a close at `releaseSession` or `close()`) published on the bus with what ids it has.
   */
  emit(kind: string, payload: Record<string, unknown>, ids: McpEventIds): void {
    if (ids.record !== undefined) {
      ids.record(kind, payload);
      return;
    }
    const bus = ids.eventBus ?? this.fallbackBus();
    if (bus === undefined) return;
    bus.publish(
      new RuntimeEvent(kind, payload, Date.now(), ids.runId ?? "", ids.sessionId ?? "", ids.agentId ?? ""),
    );
  }

  private fallbackBus(): EventBus | undefined {
    const option = this.fallback;
    try {
      return typeof option === "function" ? option() : option;
    } catch {
      return undefined;
    }
  }
}
