import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelRequest } from "../src/contracts/language-model.js";
import type { RuntimeEvent } from "../src/contracts/runtime-event.js";
import { AsyncEventBus } from "../src/events/async-event-bus.js";
import { isUnknownSession } from "../src/mcp/is-unknown-session.js";
import { McpToolset } from "../src/mcp/mcp-toolset.js";
import type {
  McpConnectionMode,
  McpServerConfig,
  McpToolsetOptions,
} from "../src/mcp/mcp-toolset-options.js";
import { scriptedModel } from "../src/testing/index.js";
import { eventually, mcpAgentRuntime, mcpTool, mcpToolContext, processRuns } from "./support/mcp-harness.js";
import {
  type EverythingHttpServer,
  everythingStdio,
  filesystemStdio,
  pidRecordingSdk,
  startEverythingHttp,
  stopAllHttpServers,
} from "./support/mcp-reference-servers.js";

/**
 * The mcp tool type against the MCP reference servers from npm, started by the tests: server-everything over stdio and over
 * Streamable HTTP in both connection modes, server-filesystem over stdio, a restarted HTTP server's stale
 * session, and one Runtime run.
 */

let bus: AsyncEventBus;
const toolsets: McpToolset[] = [];
let recording: Awaited<ReturnType<typeof pidRecordingSdk>>;

beforeAll(async () => {
  recording = await pidRecordingSdk();
});
beforeEach(() => {
  bus = new AsyncEventBus();
});
afterEach(async () => {
  await Promise.all(toolsets.splice(0).map((toolset) => toolset.close()));
});
afterAll(async () => {
  await stopAllHttpServers();
  // Every stdio server Keel started is gone once its toolset closed (the SDK ends it, SIGKILL at the latest).
  await eventually("stdio servers gone", () => !recording.pids.some(processRuns), 8000);
});

async function toolset(
  options: Partial<McpToolsetOptions> & Pick<McpToolsetOptions, "server">,
  keep = toolsets,
): Promise<McpToolset> {
  const created = await McpToolset.create({ id: "ev", eventBus: () => bus, sdk: recording.sdk, ...options });
  keep.push(created);
  return created;
}

const tool = mcpTool;

function ctx(sessionId = "s1") {
  return mcpToolContext(bus, sessionId);
}

function events(kind: string): RuntimeEvent[] {
  return bus.getHistory({ name: kind });
}

function mcpEvents(): RuntimeEvent[] {
  return bus.getHistory().filter((event) => event.kind.startsWith("tool.mcp."));
}

function textOf(result: { data?: unknown }): string {
  return (result.data as { text: string }).text;
}

const MODES: McpConnectionMode[] = ["per_call", "pooled"];

/**
 * What a transport shows of the server side of Keel's connections: for stdio the server processes Keel started,
 * for HTTP the sessions server-everything initialized; `open` keeps those still running or held.
 */
interface ServerSide {
  started(): readonly string[];
  open(ids: readonly string[]): string[];
}

describe.each(["stdio", "http"] as const)("server-everything over %s", (transport) => {
  let http: EverythingHttpServer | undefined;
  let server: () => McpServerConfig;
  let side: ServerSide;
  /** A toolset per connection mode, and a pooled one for the lifecycle test, built once and in parallel. */
  let sets: Record<McpConnectionMode | "lifecycle", McpToolset>;
  const shared: McpToolset[] = [];

  beforeAll(async () => {
    if (transport === "http") {
      const started = await startEverythingHttp();
      http = started;
      server = () => ({ transport: "http", url: started.url });
      side = {
        started: () => started.sessionsInitialized,
        open: (ids) => ids.filter((id) => started.openSessions.has(id)),
      };
    } else {
      server = everythingStdio;
      side = {
        started: () => recording.pids.map(String),
        open: (ids) => ids.filter((id) => processRuns(Number(id))),
      };
    }
    const [per_call, pooled, lifecycle] = await Promise.all(
      (["per_call", "pooled", "pooled"] as const).map((connection) =>
        toolset({ server: server(), connection }, shared),
      ),
    );
    sets = { per_call: per_call!, pooled: pooled!, lifecycle: lifecycle! };
  });
  afterAll(async () => {
    await Promise.all(shared.map((set) => set.close()));
    await http?.stop();
  });

  it("lists the server's tools with its input schemas; the allow-list filters them", async () => {
    const all = sets.per_call;
    const names = all.tools().map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["mcp__ev__echo", "mcp__ev__get-sum", "mcp__ev__get-tiny-image"]),
    );
    expect(names.length).toBeGreaterThanOrEqual(10);
    expect(sets.pooled.tools().map((t) => t.name)).toEqual(names);
    expect(tool(all, "get-sum").schema()).toMatchObject({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    });
    expect(tool(all, "get-structured-content").schema()).toMatchObject({
      properties: { location: { enum: ["New York", "Chicago", "Los Angeles"] } },
    });
    // The server's annotations: get-sum is read-only, so Keel may run it concurrently.
    expect(tool(all, "get-sum").executionSpec()).toMatchObject({
      sideEffects: "read",
      concurrencySafe: true,
    });

    const [some, none] = await Promise.allSettled([
      toolset({ server: server(), tools: ["get-sum", "echo"] }),
      toolset({ server: server(), tools: ["get_sum"] }),
    ]);
    expect(some.status === "fulfilled" && some.value.tools().map((t) => t.name)).toEqual([
      "mcp__ev__echo",
      "mcp__ev__get-sum",
    ]);
    expect(none.status === "rejected" && none.reason).toMatchObject({
      code: "config.error",
      message: expect.stringContaining("none of the allow-listed tools get_sum"),
    });
  });

  for (const mode of MODES) {
    describe(`connection ${mode}`, () => {
      it("calls echo, get-sum, get-structured-content and get-tiny-image, whose image becomes a run artifact", async () => {
        const set = sets[mode];
        const context = ctx(`calls-${mode}`);
        const secret = `distinctive-argument-${transport}-${mode}`;
        bus.clearHistory();
        const before = side.started().length;

        // Concurrently: per_call makes a connection for each call.
        const [echoed, sum, weather, picture] = await Promise.all([
          tool(set, "echo").invoke({ message: secret }, context),
          tool(set, "get-sum").invoke({ a: 2, b: 40 }, context),
          tool(set, "get-structured-content").invoke({ location: "Chicago" }, context),
          tool(set, "get-tiny-image").invoke({}, context),
        ]);
        expect(echoed).toMatchObject({ ok: true, data: { text: `Echo: ${secret}` }, artifacts: [] });
        expect(textOf(sum)).toBe("The sum of 2 and 40 is 42.");
        expect(weather.data).toMatchObject({
          structured: { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 },
        });
        expect(JSON.parse(textOf(weather))).toEqual((weather.data as { structured: unknown }).structured);

        expect(picture.artifacts).toHaveLength(1);
        const reference = picture.artifacts[0]!;
        expect(picture.data).toEqual({
          text: "Here's the image you requested:\nThe image above is the MCP logo.",
          content: [{ type: "image", mimeType: "image/png", artifact: reference.id }],
        });
        const artifact = context.artifacts.find((item) => item.metadata?.id === reference.id)!;
        expect(artifact).toMatchObject({ kind: "image", payload: { mimeType: "image/png" } });
        const base64 = (artifact.payload as { data: string }).data;
        expect(Buffer.from(base64, "base64").subarray(1, 4).toString()).toBe("PNG");
        // The bytes went to the run's artifacts, not into what the model reads.
        expect(JSON.stringify(picture)).not.toContain(base64.slice(0, 64));

        // per_call: a server process or session for each call, none left open; pooled: one, kept.
        const mine = side.started().slice(before);
        expect(new Set(mine).size).toBe(mode === "per_call" ? 4 : 1);
        expect(events("tool.mcp.connect").map((event) => event.payload.mode)).toEqual(mine.map(() => mode));
        if (mode === "per_call") {
          expect(set.openConnections()).toBe(0);
          expect(events("tool.mcp.close")).toHaveLength(4);
          await eventually("the per_call server side closed", () => side.open(mine).length === 0);
        } else {
          expect(set.openConnections()).toBe(1);
          expect(side.open(mine)).toEqual(mine);
        }

        // Events carry ids, mode, status and durations: never the arguments or results.
        expect(
          events("tool.mcp.call")
            .map((event) => `${event.payload.toolName} ${event.payload.success}`)
            .sort(),
        ).toEqual(["echo true", "get-structured-content true", "get-sum true", "get-tiny-image true"]);
        const logged = JSON.stringify(mcpEvents());
        for (const leak of [secret, "The sum of", "Light rain", base64.slice(0, 64)]) {
          expect(logged).not.toContain(leak);
        }
      });

      it("arguments invalid against the server's schema are refused before any connection", () => {
        const set = sets[mode];
        bus.clearHistory();
        const before = side.started().length;
        const refused = [
          tool(set, "get-sum").validateParams({ a: "two", b: 40 }),
          tool(set, "get-structured-content").validateParams({ location: "Paris" }),
          tool(set, "echo").validateParams({}),
        ];
        expect(refused.map((outcome) => (outcome.ok ? "accepted" : outcome.error))).toEqual([
          expect.stringMatching(/number/),
          expect.stringMatching(/allowed values/),
          expect.stringMatching(/message/),
        ]);
        expect(tool(set, "get-sum").validateParams({ a: 1, b: 2 })).toEqual({
          ok: true,
          value: { a: 1, b: 2 },
        });
        expect(events("tool.mcp.connect")).toHaveLength(0);
        expect(side.started()).toHaveLength(before);
      });
    });
  }

  it("pooled: one connection per Keel session, reused; releaseSession and close() end them", async () => {
    const set = sets.lifecycle;
    bus.clearHistory();
    const before = side.started().length;
    for (const message of ["a1", "a2", "a3"]) await tool(set, "echo").invoke({ message }, ctx("a"));
    await tool(set, "get-sum").invoke({ a: 1, b: 1 }, ctx("b"));
    const [a, b, ...more] = side.started().slice(before);
    expect(more).toEqual([]);
    expect(a).not.toBe(b);
    expect(side.open([a!, b!])).toEqual([a, b]);
    expect(events("tool.mcp.connect")).toHaveLength(2);
    expect(set.pooledSessions().sort()).toEqual(["a", "b"]);
    expect(set.openConnections()).toBe(2);

    await tool(set, "echo").releaseSession("a");
    await tool(set, "get-sum").releaseSession("a"); // idempotent, through any of the toolset's tools
    expect(set.pooledSessions()).toEqual(["b"]);
    await eventually("session a's server side closed", () => side.open([a!]).length === 0);
    expect(side.open([b!])).toEqual([b]);

    await set.close();
    expect(set.openConnections()).toBe(0);
    await eventually("session b's server side closed", () => side.open([b!]).length === 0);
    expect(events("tool.mcp.close").map((event) => event.sessionId)).toEqual(["a", ""]);
    await expect(tool(set, "echo").invoke({ message: "late" }, ctx("a"))).rejects.toThrow(/closed/);
  });
});

describe("server-filesystem over stdio", () => {
  let root: string;
  let allowed: string;
  let outside: string;
  const snapshot = (dir: string) =>
    readdirSync(dir, { recursive: true, encoding: "utf8" })
      .sort()
      .map((name) => {
        try {
          return `${name}=${readFileSync(path.join(dir, name), "utf8")}`;
        } catch {
          return `${name}/`;
        }
      });

  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), "keel-mcp-fs-"));
    allowed = path.join(root, "allowed");
    outside = path.join(root, "outside");
    mkdirSync(allowed);
    mkdirSync(outside);
    writeFileSync(path.join(outside, "secret.txt"), "not for the model");
    // A link inside the allowed directory that points out of it.
    symlinkSync(outside, path.join(allowed, "escape"));
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it("reads, writes and lists inside its directory; a path outside is the server's error, as a ToolError", async () => {
    const before = snapshot(outside);
    const set = await toolset({ id: "fs", server: filesystemStdio(allowed), connection: "pooled" });
    expect(tool(set, "write_file").executionSpec()).toMatchObject({ sideEffects: "destructive" });
    expect(tool(set, "read_text_file").executionSpec()).toMatchObject({ sideEffects: "read" });
    const notes = path.join(allowed, "notes.txt");
    await tool(set, "write_file").invoke({ path: notes, content: "first line\nsecond line" }, ctx());
    expect(readFileSync(notes, "utf8")).toBe("first line\nsecond line");
    const read = await tool(set, "read_text_file").invoke({ path: notes, head: 1 }, ctx());
    expect(textOf(read)).toBe("first line");
    await tool(set, "create_directory").invoke({ path: path.join(allowed, "sub") }, ctx());
    const listed = await tool(set, "list_directory").invoke({ path: allowed }, ctx());
    // (The server lists the link to outside as a file: it does not follow it.)
    expect(textOf(listed).split("\n").sort()).toEqual(["[DIR] sub", "[FILE] escape", "[FILE] notes.txt"]);

    const attempts: [string, Record<string, unknown>][] = [
      ["read_text_file", { path: path.join(outside, "secret.txt") }],
      ["write_file", { path: path.join(outside, "secret.txt"), content: "overwritten" }],
      ["write_file", { path: path.join(outside, "new.txt"), content: "planted" }],
      ["write_file", { path: path.join(allowed, "..", "outside", "dotdot.txt"), content: "planted" }],
      ["read_text_file", { path: path.join(allowed, "escape", "secret.txt") }],
      ["write_file", { path: path.join(allowed, "escape", "via-link.txt"), content: "planted" }],
      ["move_file", { source: notes, destination: path.join(outside, "moved.txt") }],
    ];
    for (const [name, args] of attempts) {
      const refused = tool(set, name).invoke(args, ctx());
      await expect(refused, `${name} ${JSON.stringify(args)}`).rejects.toMatchObject({
        name: "ToolError",
        code: "tool.mcp_error",
        message: expect.stringMatching(
          new RegExp(`^MCP tool '${name}' reported an error: .*(Access denied|outside allowed)`),
        ),
      });
    }
    expect(snapshot(outside)).toEqual(before);
    expect(readFileSync(notes, "utf8")).toBe("first line\nsecond line");
    expect(events("tool.mcp.call").filter((event) => event.payload.error === "tool_error")).toHaveLength(
      attempts.length,
    );
    expect(JSON.stringify(mcpEvents())).not.toContain("Access denied");
  });

  it("in a Runtime run the model writes a file once approved, and reads the server's refusal of a path outside", async () => {
    const before = snapshot(outside);
    const target = path.join(allowed, "from-the-model.txt");
    const model = scriptedModel(
      [
        {
          toolCalls: [
            { id: "c1", name: "mcp__fs__write_file", arguments: { path: target, content: "hello" } },
          ],
        },
        {
          toolCalls: [
            {
              id: "c2",
              name: "mcp__fs__read_text_file",
              arguments: { path: path.join(outside, "secret.txt") },
            },
          ],
        },
        (request: ModelRequest) => ({
          text: request.messages
            .filter((message) => message.role === "tool")
            .map((message) => String(message.content))
            .join("\n---\n"),
        }),
      ],
      { whenExhausted: "repeat-last" },
    );
    const runtime = await mcpAgentRuntime(
      model,
      {
        id: "fs",
        config: {
          server: filesystemStdio(allowed),
          tools: ["write_file", "read_text_file"],
          connection: "pooled",
        },
      },
      // The server annotates write_file as destructive: Keel refuses it unless enabled, and then asks first.
      { permissions: { enable: ["destructive"] } },
    );
    try {
      const waiting = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "go" });
      expect(waiting.stopReason).toBe("suspended");
      expect(waiting.pendingToolCalls).toMatchObject([{ toolCallId: "c1", toolId: "mcp__fs__write_file" }]);
      expect(existsSync(target)).toBe(false);
      const result = await runtime.decide({
        runId: waiting.runId,
        decisions: [{ toolCallId: "c1", action: "approve" }],
      });
      expect(result.stopReason).toBe("completed");
      expect(readFileSync(target, "utf8")).toBe("hello");
      const [wrote, refused] = String(result.finalOutput).split("\n---\n");
      expect(wrote).toContain(`Successfully wrote to ${target}`);
      expect(refused).toContain("tool.mcp_error");
      expect(refused).toContain("Access denied - path outside allowed directories");
      expect(refused).not.toContain("not for the model");
      expect(snapshot(outside)).toEqual(before);
    } finally {
      await runtime.close();
    }
  });
});

describe("a restarted Streamable HTTP server-everything", () => {
  it("pooled: the stale session is detected, reconnected once, and the call succeeds", async () => {
    const first = await startEverythingHttp();
    const set = await toolset({
      server: { transport: "http", url: first.url, headers: { authorization: "Bearer hidden-token" } },
      connection: "pooled",
    });
    await tool(set, "echo").invoke({ message: "before" }, ctx());
    expect(first.openSessions.size).toBe(1);
    await first.stop();
    const second = await startEverythingHttp(first.port);
    bus.clearHistory();

    const result = await tool(set, "echo").invoke({ message: "after" }, ctx());
    expect(result.data).toEqual({ text: "Echo: after" });
    expect(second.sessionsInitialized).toHaveLength(1);
    expect(events("tool.mcp.connect").map((event) => event.payload)).toEqual([
      expect.objectContaining({ mode: "pooled", success: true, reconnect: true }),
    ]);
    expect(events("tool.mcp.call").map((event) => event.payload.success)).toEqual([true]);
    // The call on the stale session was refused (400, "No valid session ID provided"): Keel closed that
    // connection, made a new one and sent the call again.
    expect(mcpEvents().map((event) => event.kind)).toEqual([
      "tool.mcp.close",
      "tool.mcp.connect",
      "tool.mcp.call",
    ]);
    expect(set.pooledSessions()).toEqual(["s1"]);
    expect(set.openConnections()).toBe(1);
    expect(JSON.stringify(bus.getHistory())).not.toContain("hidden-token");

    // The session goes on over the new connection.
    await tool(set, "get-sum").invoke({ a: 1, b: 2 }, ctx());
    expect(events("tool.mcp.connect")).toHaveLength(1);
    await set.close();
    await eventually("the new session closed", () => second.openSessions.size === 0);
    await second.stop();
  });

  it("knows a forgotten session by 404, or by a 400 that says the session id is not valid, and nothing else", () => {
    const body = (message: string) =>
      `Streamable HTTP error: Error POSTing to endpoint: {"jsonrpc":"2.0","error":{"code":-32000,"message":"${message}"}}`;
    expect(isUnknownSession(404, body("Session not found"))).toBe(true);
    expect(isUnknownSession(404, "")).toBe(true);
    expect(isUnknownSession(400, body("Bad Request: No valid session ID provided"))).toBe(true);
    expect(isUnknownSession(400, body("Invalid session ID"))).toBe(true);
    expect(isUnknownSession(400, body("Bad Request: Mcp-Session-Id header is required"))).toBe(false);
    expect(isUnknownSession(400, body("Bad Request: Server not initialized"))).toBe(false);
    expect(isUnknownSession(400, body("Parse error: Invalid JSON"))).toBe(false);
    expect(isUnknownSession(500, body("Bad Request: No valid session ID provided"))).toBe(false);
    expect(isUnknownSession(undefined, "fetch failed")).toBe(false);
  });
});

describe("the mcp tool type in a Runtime, against server-everything over HTTP", () => {
  it("a ReAct run calls get-sum over a pooled connection and the model reads the result", async () => {
    const server = await startEverythingHttp();
    const model = scriptedModel(
      [
        { toolCalls: [{ id: "c1", name: "mcp__everything__get-sum", arguments: { a: 2, b: 40 } }] },
        (request: ModelRequest) => ({ text: `the server says: ${String(request.messages.at(-1)!.content)}` }),
      ],
      { whenExhausted: "repeat-last" },
    );
    const runtime = await mcpAgentRuntime(model, {
      id: "everything",
      config: {
        server: { url: server.url },
        tools: ["get-sum", "echo"],
        connection_mode: "pooled",
        probe_on_preflight: true,
      },
    });
    const seen: RuntimeEvent[] = [];
    runtime.eventBus.subscribe("*", (event) => {
      if (event.kind.startsWith("tool.mcp.")) seen.push(event);
    });
    try {
      const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "add 2 and 40" });
      expect(result.stopReason).toBe("completed");
      expect(result.finalOutput).toContain("The sum of 2 and 40 is 42.");
      const offered = model.requests[0]!.tools!;
      expect(offered.map((t) => t.name)).toEqual(["mcp__everything__echo", "mcp__everything__get-sum"]);
      expect(offered[1]!.inputSchema).toMatchObject({
        properties: { a: { type: "number" } },
        required: ["a", "b"],
      });
      expect(seen.map((event) => event.kind)).toEqual([
        // Loading the agent lists the server's tools on a session of its own, which it ends.
        "tool.mcp.connect",
        "tool.mcp.close",
        // The probe opens the run's pooled session, which the call then uses.
        "tool.mcp.connect",
        "tool.mcp.preflight",
        "tool.mcp.call",
      ]);
      expect(seen.at(-1)).toMatchObject({ runId: result.runId, sessionId: "s", payload: { success: true } });
      expect(server.sessionsInitialized).toHaveLength(2);
      const [listing, run] = server.sessionsInitialized;
      await eventually("the listing session closed", () => !server.openSessions.has(listing!));
      expect([...server.openSessions]).toEqual([run]);
      await runtime.releaseSession("s");
      expect(seen.at(-1)?.kind).toBe("tool.mcp.close");
      await eventually("the run's session closed", () => server.openSessions.size === 0);
    } finally {
      await runtime.close();
      await server.stop();
    }
  });
});
