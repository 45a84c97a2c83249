import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Runtime } from "../src/index.js";
import { defineTool } from "../src/tools/define-tool.js";
import { deferred } from "./support/harness.js";
import { eventually, processRuns } from "./support/mcp-harness.js";

/**
 * Dropping a loaded agent — reload(), reloadAgent(id), invalidateAgent(id) — closes what the old agent opened:
 * an MCP toolset's pooled connection ends its server process, so no server outlives close(). Each stdio server
 * of the demo names itself in a directory (MCP_DEMO_PID_DIR), which is how the test counts them.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const DEMO = path.join(here, "fixtures/mcp/demo-server.mjs");
const root = mkdtempSync(path.join(tmpdir(), "keel-mcp-reload-"));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** The config file: agent `a` with a pooled `mcp` tool probed in preflight, so a run opens its session's server. */
function writeConfig(file: string, pidDir: string, name: string): void {
  const server = { command: process.execPath, args: [DEMO, "--stdio"], env: { MCP_DEMO_PID_DIR: pidDir } };
  const tool = {
    id: "demo",
    type: "mcp",
    config: { server: { ...server, stderr: "ignore" }, connection: "pooled", probe_on_preflight: true },
  };
  writeFileSync(file, JSON.stringify({ agents: [{ id: "a", name, tools: [tool] }] }));
}

function liveServers(pidDir: string): number[] {
  return readdirSync(pidDir)
    .map(Number)
    .filter((pid) => processRuns(pid));
}

describe("reloading an agent with pooled MCP connections", () => {
  it("reload, reloadAgent and invalidateAgent end the old agent's servers; none outlives close()", async () => {
    const dir = mkdtempSync(path.join(root, "drop-"));
    const pidDir = path.join(dir, "pids");
    const file = path.join(dir, "agent.json");
    mkdirSync(pidDir);
    writeConfig(file, pidDir, "First");
    const runtime = await Runtime.fromConfig(file);
    let closed = false;
    try {
      const run = async () => {
        const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "hi" });
        expect(result.stopReason).toBe("completed");
        // The session's pooled server stays up after the run (the one that listed tools at load has ended).
        await eventually("one server per loaded agent", () => liveServers(pidDir).length === 1);
        return liveServers(pidDir)[0]!;
      };
      const first = await run();

      writeConfig(file, pidDir, "Second");
      expect(await runtime.reload()).toEqual({ changedAgents: ["a"] });
      await eventually("the reloaded agent's server ended", () => !processRuns(first));
      const second = await run();
      expect(second).not.toBe(first);

      writeConfig(file, pidDir, "Third");
      await runtime.reloadAgent("a");
      await eventually("the server of reloadAgent's old agent ended", () => !processRuns(second));
      const third = await run();

      await runtime.invalidateAgent("a");
      await eventually("the server of the invalidated agent ended", () => !processRuns(third));
      await run();

      await runtime.close();
      closed = true;
      await eventually("no server left after close()", () => liveServers(pidDir).length === 0);
      expect(readdirSync(pidDir).length).toBeGreaterThanOrEqual(8);
    } finally {
      if (!closed) await runtime.close();
    }
  }, 60_000);

  it("a run of the old agent keeps its tools until it ends; code-first tools are not closed", async () => {
    const entered = deferred();
    const release = deferred();
    const closes: string[] = [];
    const slow = defineTool({
      name: "slow",
      description: "waits",
      inputSchema: { type: "object", properties: { query: { type: "string" } } },
      execute: async () => {
        entered.resolve();
        await release.promise;
        return "done";
      },
    });
    Object.assign(slow, { close: async () => void closes.push("slow") });
    const runtime = await Runtime.fromDict({ agents: [{ id: "a", name: "A", tools: [slow] }] });
    try {
      const running = runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "/tool slow now" });
      await entered.promise;
      let invalidated = false;
      const invalidating = runtime.invalidateAgent("a").then(() => {
        invalidated = true;
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(invalidated).toBe(false);
      release.resolve();
      expect((await running).stopReason).toBe("completed");
      await invalidating;
      expect(closes).toEqual([]);
    } finally {
      await runtime.close();
    }
  });
});
