import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelRequest } from "../src/contracts/language-model.js";
import type { RuntimeEvent } from "../src/contracts/runtime-event.js";
import type { ToolContext } from "../src/contracts/tool.js";
import { AsyncEventBus } from "../src/events/async-event-bus.js";
import { Runtime } from "../src/index.js";
import { importMcpSdk, MCP_SDK_PACKAGE } from "../src/mcp/mcp-sdk.js";
import { McpToolset } from "../src/mcp/mcp-toolset.js";
import type { McpToolsetOptions } from "../src/mcp/mcp-toolset-options.js";
import { getPlugin } from "../src/plugins/plugin-registry.js";
import { scriptedModel } from "../src/testing/index.js";
// @ts-expect-error: a plain .mjs test fixture without types
import { state as serverState } from "./fixtures/mcp/demo-server.mjs";
// @ts-expect-error: a plain .mjs test fixture without types
import { startHttpServer } from "./fixtures/mcp/http-server.mjs";
import { eventually, mcpTool, mcpToolContext, processRuns } from "./support/mcp-harness.js";

/** The mcp tool type against real MCP servers built with the SDK: one spawned over stdio, one in process over HTTP. */

const here = path.dirname(fileURLToPath(import.meta.url));
const DEMO = path.join(here, "fixtures/mcp/demo-server.mjs");
const STDIO = { transport: "stdio" as const, command: process.execPath, args: [DEMO, "--stdio"] };

interface HttpServer {
  url: string;
  port: number;
  stats: { sessionsOpened: number; sessionsClosed: number; notFound: number; connections: number };
  sessions: Map<string, unknown>;
  sockets: Set<unknown>;
  stop(): Promise<void>;
}

let bus: AsyncEventBus;
const toolsets: McpToolset[] = [];

beforeEach(() => {
  bus = new AsyncEventBus();
  serverState.calls = 0;
  serverState.echoCalls = 0;
  serverState.slowCalls = 0;
});
afterEach(async () => {
  await Promise.all(toolsets.splice(0).map((toolset) => toolset.close()));
});

async function toolset(
  options: Partial<McpToolsetOptions> & Pick<McpToolsetOptions, "server">,
): Promise<McpToolset> {
  const created = await McpToolset.create({ id: "demo", eventBus: bus, ...options });
  toolsets.push(created);
  return created;
}

const tool = mcpTool;

/** A tool context without a model or a run loop. */
function ctx(sessionId = "s1"): ToolContext {
  return mcpToolContext(bus, sessionId);
}

function events(kind: string): RuntimeEvent[] {
  return bus.getHistory({ name: kind });
}

const isAlive = processRuns;

function until(check: () => boolean, ms = 3000): Promise<void> {
  return eventually("condition", check, ms);
}

async function statsOf(set: McpToolset, sessionId = "s1"): Promise<{ pid: number; calls: number }> {
  const result = await tool(set, "stats").invoke({}, ctx(sessionId));
  return JSON.parse((result.data as { text: string }).text);
}

describe("MCP toolset over stdio", () => {
  it("lists the server's tools as Keel tools with the server's input schemas, filtered by the allow-list", async () => {
    const all = await toolset({ server: STDIO });
    expect(all.tools().map((t) => t.name)).toEqual([
      "mcp__demo__echo",
      "mcp__demo__add",
      "mcp__demo__slow",
      "mcp__demo__fail",
      "mcp__demo__picture",
      "mcp__demo__stats",
    ]);
    const echo = tool(all, "echo");
    expect(echo.description).toBe("Echo a message back");
    expect(echo.schema()).toMatchObject({
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    });
    expect(echo.executionSpec()).toMatchObject({ sideEffects: "read", concurrencySafe: true });
    const some = await toolset({ server: STDIO, tools: ["add", "echo"], namePrefix: "" });
    expect(some.tools().map((t) => t.name)).toEqual(["echo", "add"]);
  });

  it("validates arguments against the server's schema before any connection is made", async () => {
    const set = await toolset({ server: STDIO });
    bus.clearHistory();
    const echo = tool(set, "echo");
    const bad = echo.validateParams({ message: 5, times: 9 });
    expect(bad.ok).toBe(false);
    expect(bad.ok ? "" : bad.error).toMatch(/message|times/);
    expect(echo.validateParams({ message: "hi" })).toEqual({ ok: true, value: { message: "hi" } });
    expect(events("tool.mcp.connect")).toHaveLength(0);
  });

  it("per_call connects, calls and closes: a new server process each call, none left running", async () => {
    const set = await toolset({ server: STDIO, connection: "per_call" });
    bus.clearHistory();
    const first = await statsOf(set);
    const second = await statsOf(set);
    expect(first.pid).not.toBe(second.pid);
    expect(events("tool.mcp.connect").map((e) => e.payload.mode)).toEqual(["per_call", "per_call"]);
    expect(events("tool.mcp.close")).toHaveLength(2);
    expect(set.openConnections()).toBe(0);
    await until(() => !isAlive(first.pid) && !isAlive(second.pid));
  });

  it("pooled keeps one server per session until releaseSession; close() ends the rest", async () => {
    const set = await toolset({ server: STDIO, connection: "pooled" });
    bus.clearHistory();
    const a1 = await statsOf(set, "a");
    const a2 = await statsOf(set, "a");
    const b1 = await statsOf(set, "b");
    expect(a1.pid).toBe(a2.pid);
    expect(a2.calls).toBeGreaterThanOrEqual(0);
    expect(b1.pid).not.toBe(a1.pid);
    expect(events("tool.mcp.connect")).toHaveLength(2);
    expect(set.pooledSessions().sort()).toEqual(["a", "b"]);

    await tool(set, "echo").releaseSession("a");
    await tool(set, "add").releaseSession("a"); // idempotent, through any of the toolset's tools
    expect(set.pooledSessions()).toEqual(["b"]);
    await until(() => !isAlive(a1.pid));
    expect(isAlive(b1.pid)).toBe(true);

    await set.close();
    expect(set.openConnections()).toBe(0);
    await until(() => !isAlive(b1.pid));
    expect(events("tool.mcp.close")).toHaveLength(2);
  });

  it("reconnects a pooled session whose server process died", async () => {
    const set = await toolset({ server: STDIO, connection: "pooled" });
    const before = await statsOf(set);
    process.kill(before.pid);
    await until(() => !isAlive(before.pid));
    await until(() => set.openConnections() === 0);
    const after = await statsOf(set);
    expect(after.pid).not.toBe(before.pid);
    expect(events("tool.mcp.connect").at(-1)?.payload.reconnect).toBe(true);
  });

  it("maps text, structured, image and resource content; isError becomes a ToolError with the server's text", async () => {
    const set = await toolset({ server: STDIO, connection: "pooled" });
    const context = ctx();
    const added = await tool(set, "add").invoke({ a: 2, b: 3 }, context);
    expect(added).toMatchObject({ ok: true, data: { text: "5", structured: { sum: 5 } }, artifacts: [] });

    const picture = await tool(set, "picture").invoke({}, context);
    expect(picture.ok).toBe(true);
    expect(picture.artifacts).toHaveLength(1);
    const data = picture.data as { text: string; content: Record<string, unknown>[] };
    expect(data.text).toBe("here it is");
    expect(data.content).toEqual([
      { type: "image", mimeType: "image/png", artifact: picture.artifacts[0]!.id },
      { type: "resource", uri: "memo://one", mimeType: "text/plain", text: "memo text" },
      { type: "resource_link", uri: "memo://two", name: "two" },
    ]);
    // The image's bytes went to the run's artifacts, not into the result the model reads.
    expect(JSON.stringify(picture)).not.toContain(Buffer.from("not really a png").toString("base64"));
    expect(context.artifacts[0]).toMatchObject({ kind: "image", payload: { mimeType: "image/png" } });

    await expect(tool(set, "fail").invoke({ reason: "it must" }, context)).rejects.toMatchObject({
      code: "tool.mcp_error",
      message: expect.stringContaining("failed because it must"),
    });
    expect(events("tool.mcp.call").at(-1)?.payload).toMatchObject({
      toolName: "fail",
      success: false,
      error: "tool_error",
    });
  });

  it("probe_on_preflight connects and lists tools once per session, emitting tool.mcp.preflight", async () => {
    const set = await toolset({ server: STDIO, probeOnPreflight: true });
    bus.clearHistory();
    const echo = tool(set, "echo");
    await echo.preflight(ctx("p") as never);
    await tool(set, "add").preflight(ctx("p") as never);
    const [event, ...rest] = events("tool.mcp.preflight");
    expect(rest).toHaveLength(0);
    expect(event?.payload).toMatchObject({ toolId: "demo", result: "ok", toolCount: 6 });
    expect(event?.sessionId).toBe("p");
    await echo.preflight(ctx("q") as never);
    expect(events("tool.mcp.preflight")).toHaveLength(2);
    expect(set.openConnections()).toBe(0);
  });

  it("an allow-listed name the server lacks fails preflight with a config error naming it", async () => {
    const set = await toolset({ server: STDIO, tools: ["echo", "ecko"] });
    expect(set.tools().map((t) => t.name)).toEqual(["mcp__demo__echo"]);
    await expect(tool(set, "echo").preflight(ctx() as never)).rejects.toMatchObject({
      code: "config.error",
      message: expect.stringContaining("'ecko'"),
    });
    await expect(toolset({ server: STDIO, tools: ["nope"] })).rejects.toThrow(
      /none of the allow-listed tools nope/,
    );
  });

  it("events carry ids, mode, status and durations, never arguments or results", async () => {
    const set = await toolset({ server: STDIO, connection: "pooled", probeOnPreflight: true });
    const secret = "s3cr3t-argument";
    await tool(set, "echo").preflight(ctx() as never);
    await tool(set, "echo").invoke({ message: secret }, ctx());
    await expect(tool(set, "fail").invoke({ reason: secret }, ctx())).rejects.toThrow();
    await set.close();
    const mcpEvents = bus.getHistory().filter((event) => event.kind.startsWith("tool.mcp."));
    expect(new Set(mcpEvents.map((event) => event.kind))).toEqual(
      new Set(["tool.mcp.connect", "tool.mcp.call", "tool.mcp.preflight", "tool.mcp.close"]),
    );
    expect(JSON.stringify(mcpEvents)).not.toContain(secret);
    expect(JSON.stringify(mcpEvents)).not.toContain("failed because");
    const call = mcpEvents.find((event) => event.kind === "tool.mcp.call")!;
    expect(Object.keys(call.payload).sort()).toEqual(
      ["durationMs", "mode", "server", "success", "toolId", "toolName"].sort(),
    );
    expect(call.payload).toMatchObject({ toolId: "demo", toolName: "echo", mode: "pooled", success: true });
    expect(call.runId).toBe("run-s1");
  });
});

describe("MCP toolset over streamable HTTP", () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttpServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it("per_call opens and ends a server session per call; pooled one per Keel session", async () => {
    const perCall = await toolset({ server: { transport: "http", url: server.url } });
    const opened = server.stats.sessionsOpened;
    const closed = server.stats.sessionsClosed;
    await tool(perCall, "echo").invoke({ message: "a" }, ctx());
    await tool(perCall, "echo").invoke({ message: "b" }, ctx());
    expect(server.stats.sessionsOpened - opened).toBe(2);
    // The client ends its session on the server (DELETE) when it closes.
    await until(() => server.stats.sessionsClosed - closed === 2);

    const pooled = await toolset({ server: { transport: "http", url: server.url }, connection: "pooled" });
    const base = server.stats.sessionsOpened;
    for (const message of ["x", "y", "z"]) await tool(pooled, "echo").invoke({ message }, ctx("a"));
    await tool(pooled, "echo").invoke({ message: "w" }, ctx("b"));
    expect(server.stats.sessionsOpened - base).toBe(2);
    expect(server.sessions.size).toBe(2);
    await pooled.releaseSession("a");
    await until(() => server.sessions.size === 1);
    await pooled.close();
    await until(() => server.sessions.size === 0);
    expect(serverState.echoCalls).toBe(6);
  });

  it("dedup_inflight: identical concurrent calls in a session share one request", async () => {
    const set = await toolset({ server: { transport: "http", url: server.url }, connection: "pooled" });
    const slow = tool(set, "slow");
    const context = ctx();
    const results = await Promise.all([
      slow.invoke({ ms: 150, tag: "t" }, context),
      slow.invoke({ tag: "t", ms: 150 }, context), // same arguments, other key order
      slow.invoke({ ms: 150, tag: "t" }, context),
      slow.invoke({ ms: 150, tag: "other" }, context),
      slow.invoke({ ms: 150, tag: "t" }, ctx("another-session")),
    ]);
    expect(results.map((result) => (result.data as { text: string }).text)).toEqual([
      "slept 150 for t",
      "slept 150 for t",
      "slept 150 for t",
      "slept 150 for other",
      "slept 150 for t",
    ]);
    expect(serverState.slowCalls).toBe(3);
    expect(events("tool.mcp.call")).toHaveLength(3);
    // Sequential identical calls are not merged.
    await slow.invoke({ ms: 0, tag: "t" }, context);
    await slow.invoke({ ms: 0, tag: "t" }, context);
    expect(serverState.slowCalls).toBe(5);

    const plain = await toolset({ server: { transport: "http", url: server.url }, dedupInflight: false });
    await Promise.all([0, 1, 2].map(() => tool(plain, "slow").invoke({ ms: 50, tag: "t" }, context)));
    expect(serverState.slowCalls).toBe(8);
  });

  it("a restarted server's 404 for the stale session: reconnect once and retry the call", async () => {
    const first = await startHttpServer();
    const port = first.port;
    const set = await toolset({
      server: { transport: "http", url: first.url, headers: { authorization: "Bearer hidden-token" } },
      connection: "pooled",
    });
    await tool(set, "echo").invoke({ message: "before" }, ctx());
    await first.stop();
    const second: HttpServer = await startHttpServer(port);
    // A restart takes a moment; the client's idle keep-alive sockets to the old process are gone by then.
    await new Promise((resolve) => setTimeout(resolve, 100));
    try {
      bus.clearHistory();
      const result = await tool(set, "echo").invoke({ message: "after" }, ctx());
      expect(result.data).toEqual({ text: "after" });
      expect(second.stats.notFound).toBeGreaterThanOrEqual(1);
      expect(second.stats.sessionsOpened).toBe(1);
      const connects = events("tool.mcp.connect");
      expect(connects.map((event) => event.payload.reconnect)).toEqual([true]);
      expect(events("tool.mcp.call").map((event) => event.payload.success)).toEqual([true]);
      expect(JSON.stringify(bus.getHistory())).not.toContain("hidden-token");
      await set.close();
      await until(() => second.sessions.size === 0);
    } finally {
      await second.stop();
    }
  });

  it("a call past timeout_ms is a tool.timeout; a closed toolset refuses calls", async () => {
    const set = await toolset({ server: { transport: "http", url: server.url }, timeoutMs: 100 });
    await expect(tool(set, "slow").invoke({ ms: 400, tag: "late" }, ctx())).rejects.toMatchObject({
      code: "tool.timeout",
    });
    expect(events("tool.mcp.call").at(-1)?.payload).toMatchObject({
      success: false,
      error: "McpError -32001",
    });
    await set.close();
    await expect(tool(set, "echo").invoke({ message: "x" }, ctx())).rejects.toThrow(/closed/);
  });

  it("a server that cannot be reached fails to load with the reason; the connect event says so", async () => {
    await expect(
      toolset({
        server: { transport: "stdio", command: path.join(here, "no-such-server"), stderr: "ignore" },
      }),
    ).rejects.toMatchObject({ code: "tool.error", message: expect.stringContaining("Could not connect") });
    expect(events("tool.mcp.connect").at(-1)?.payload).toMatchObject({ success: false, mode: "per_call" });
  });

  it("closing leaves no sockets open on the server", async () => {
    const own = await startHttpServer();
    try {
      const set = await toolset({ server: { transport: "http", url: own.url }, connection: "pooled" });
      await tool(set, "echo").invoke({ message: "a" }, ctx("a"));
      await tool(set, "echo").invoke({ message: "b" }, ctx("b"));
      await set.close();
      await until(() => own.sessions.size === 0 && own.sockets.size === 0, 8000);
    } finally {
      await own.stop();
    }
  });
});

describe("the mcp tool type in a Runtime", () => {
  function addThenAnswer() {
    return scriptedModel(
      [
        (request: ModelRequest) => {
          const last = request.messages.at(-1)!;
          if (last.role === "tool") return { text: `the server says: ${String(last.content)}` };
          return { toolCalls: [{ id: "c1", name: "mcp__calc__add", arguments: { a: 2, b: 40 } }] };
        },
      ],
      { whenExhausted: "repeat-last" },
    );
  }

  it("an agent's ReAct run calls an MCP tool over stdio end to end; releaseSession and close end the server", async () => {
    const model = addThenAnswer();
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: model,
          tools: [
            {
              id: "calc",
              type: "mcp",
              config: {
                server: { command: process.execPath, args: [DEMO, "--stdio"], stderr: "ignore" },
                tools: ["add", "stats"],
                connection: "pooled",
                probe_on_preflight: true,
              },
            },
          ],
        },
      ],
    });
    const seen: RuntimeEvent[] = [];
    runtime.eventBus.subscribe("*", (event) => {
      if (event.kind.startsWith("tool.mcp.") || event.kind === "tool.preflight") seen.push(event);
    });
    try {
      const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "add" });
      expect(result.stopReason).toBe("completed");
      expect(result.finalOutput).toContain('"text":"42"');
      const tools = model.requests[0]!.tools!;
      expect(tools.map((t) => t.name)).toEqual(["mcp__calc__add", "mcp__calc__stats"]);
      expect(tools[0]!.inputSchema).toMatchObject({ properties: { a: { type: "number" } } });
      expect(seen.map((event) => event.kind)).toEqual([
        // Loading the agent lists the server's tools on a connection of its own.
        "tool.mcp.connect",
        "tool.mcp.close",
        // The probe opens the session's pooled connection, which the call then uses.
        "tool.mcp.connect",
        "tool.mcp.preflight",
        "tool.preflight",
        "tool.preflight",
        "tool.mcp.call",
      ]);
      expect(seen.find((event) => event.kind === "tool.mcp.call")?.runId).toBe(result.runId);
      // What happens within the run (the probe's connect, the preflight, the call) is in its numbered log, in
      // order between the run's own events; the connect and close while loading belong to no run.
      const numbered = seen.filter((event) => event.sequence > 0);
      expect(numbered.map((event) => event.kind)).toEqual([
        "tool.mcp.connect",
        "tool.mcp.preflight",
        "tool.preflight",
        "tool.preflight",
        "tool.mcp.call",
      ]);
      expect(numbered.every((event) => event.runId === result.runId)).toBe(true);
      const logged: string[] = [];
      for await (const chunk of runtime.attach(result.runId)) logged.push(chunk.kind);
      expect(logged.filter((kind) => kind.startsWith("tool."))).toEqual([
        "tool.mcp.connect",
        "tool.mcp.preflight",
        "tool.preflight",
        "tool.preflight",
        "tool.started",
        "tool.mcp.call",
        "tool.finished",
      ]);
      await runtime.releaseSession("s");
      expect(seen.at(-1)?.kind).toBe("tool.mcp.close");
      expect(seen.at(-1)?.sequence).toBe(0);
    } finally {
      await runtime.close();
    }
  });

  it("invalid arguments are a tool.validation result the model sees; the server is not called", async () => {
    const model = scriptedModel(
      [
        { toolCalls: [{ id: "c1", name: "mcp__calc__add", arguments: { a: "two", b: 40 } }] },
        (request: ModelRequest) => ({ text: String(request.messages.at(-1)!.content) }),
      ],
      { whenExhausted: "repeat-last" },
    );
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: model,
          tools: [{ id: "calc", type: "mcp", config: { server: { ...STDIO, stderr: "ignore" } } }],
        },
      ],
    });
    const calls: RuntimeEvent[] = [];
    runtime.eventBus.subscribe("tool.mcp.call", (event) => {
      calls.push(event);
    });
    try {
      const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "add" });
      expect(result.stopReason).toBe("completed");
      expect(result.finalOutput).toContain("tool.validation");
      expect(result.finalOutput).toContain("Invalid arguments for tool 'mcp__calc__add'");
      expect(calls).toHaveLength(0);
    } finally {
      await runtime.close();
    }
  });

  it("an allow-listed tool the server lacks fails the run before its loop, naming the tool", async () => {
    const model = scriptedModel([{ text: "never" }]);
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: model,
          tools: [
            {
              id: "calc",
              type: "mcp",
              config: { server: { ...STDIO, stderr: "ignore" }, tools: ["add", "mul"] },
            },
          ],
        },
      ],
    });
    try {
      const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "x" });
      expect(result.stopReason).toBe("failed");
      expect(result.error).toMatch(/\[tool:mcp__calc__add\].*'mul'/);
      expect(model.callCount).toBe(0);
    } finally {
      await runtime.close();
    }
  });

  it("bad config is a plugin config error; the package is named when it cannot be imported", async () => {
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          tools: [{ id: "m", type: "mcp", config: { server: { transport: "http", url: "ftp://x" } } }],
        },
      ],
    });
    try {
      await expect(
        runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "x" }),
      ).rejects.toMatchObject({
        code: "plugin.config",
        message: expect.stringContaining("server.url"),
      });
    } finally {
      await runtime.close();
    }
    expect(getPlugin("tool", "mcp")?.requiresPackage).toBe(MCP_SDK_PACKAGE);
    await expect(
      importMcpSdk(() =>
        Promise.reject(Object.assign(new Error("Cannot find package"), { code: "ERR_MODULE_NOT_FOUND" })),
      ),
    ).rejects.toMatchObject({
      code: "plugin.load",
      message: expect.stringContaining(MCP_SDK_PACKAGE),
      hint: `npm install ${MCP_SDK_PACKAGE}`,
    });
  });
});
