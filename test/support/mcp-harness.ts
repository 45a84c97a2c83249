import type { LanguageModel } from "../../src/contracts/language-model.js";
import type { RunArtifact } from "../../src/contracts/run-types.js";
import type { ToolContext } from "../../src/contracts/tool.js";
import type { AsyncEventBus } from "../../src/events/async-event-bus.js";
import type { McpTool } from "../../src/mcp/mcp-tool.js";
import type { McpToolset } from "../../src/mcp/mcp-toolset.js";
import { Runtime } from "../../src/runtime/runtime.js";

/**
 * What the MCP tests share: finding a toolset's tool by the server's name, calling it outside a run, waiting for
 * processes and sessions to end, and a Runtime whose agent has one `mcp` tool entry.
 */

/** The toolset's tool for the server's tool `name`. */
export function mcpTool(set: McpToolset, name: string): McpTool {
  const found = set.tools().find((candidate) => (candidate as McpTool).mcpName === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found as McpTool;
}

/** A tool context without a model or a run loop: run `run-<sessionId>`, its artifacts collected. */
export function mcpToolContext(
  bus: AsyncEventBus,
  sessionId: string,
): ToolContext & { artifacts: RunArtifact[] } {
  return {
    sessionId,
    runId: `run-${sessionId}`,
    agentId: "agent",
    eventBus: bus,
    signal: new AbortController().signal,
    artifacts: [],
  } as unknown as ToolContext & { artifacts: RunArtifact[] };
}

/** Whether a process with this id runs (signal 0 only checks). */
export function processRuns(pid: number): boolean {
  try {
    return process.kill(pid, 0);
  } catch {
    return false;
  }
}

/** Poll `condition` every 20 ms; fail naming `what` if it does not hold within `limitMs`. */
export async function eventually(what: string, condition: () => boolean, limitMs = 5000): Promise<void> {
  for (const deadline = Date.now() + limitMs; !condition(); ) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A Runtime with one agent `a` whose tools are one `{type: "mcp"}` entry with this id and config. */
export function mcpAgentRuntime(
  llm: LanguageModel,
  tool: { id: string; config: Record<string, unknown> },
  agent: Record<string, unknown> = {},
): Promise<Runtime> {
  return Runtime.fromDict({
    agents: [
      { id: "a", name: "A", llm, ...agent, tools: [{ id: tool.id, type: "mcp", config: tool.config }] },
    ],
  });
}
