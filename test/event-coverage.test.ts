import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStreamPart,
} from "../src/contracts/language-model.js";
import { EVENT_SCHEMAS } from "../src/events/event-schemas.js";
import {
  type BackgroundTool,
  BasePattern,
  DEFAULT_EXECUTION_SPEC,
  defineTool,
  Runtime,
  registerPlugin,
  type StepAction,
  ToolRateLimitError,
} from "../src/index.js";
import { InMemorySessionManager } from "../src/sessions/in-memory-session-manager.js";
import { scriptedModel } from "../src/testing/index.js";
import { ProcessView } from "./support/crashable-store.js";
import { addTool, collect, toolCall } from "./support/harness.js";

/**
 * Every event EVENT_SCHEMAS declares (and docs/events.md documents) is emitted by some run: a set of scenario
 * runs whose union of event kinds, as the event bus sees them, covers the table.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const DEMO = path.join(here, "fixtures/mcp/demo-server.mjs");

const seen = new Set<string>();
/** Payload values that are not of the type their event declares for them: the types would lie. */
const mistyped: string[] = [];
const runtimes: Runtime[] = [];

function watch(runtime: Runtime): Runtime {
  runtimes.push(runtime);
  runtime.eventBus.subscribe("*", (event) => {
    seen.add(event.kind);
    mistyped.push(...mistypedKeys(event.kind, event.payload));
  });
  return runtime;
}

function mistypedKeys(kind: string, payload: Record<string, unknown>): string[] {
  const schema = EVENT_SCHEMAS[kind];
  if (schema === undefined) return [];
  const optional = new Set(schema.optionalPayload);
  return Object.entries(schema.fields)
    .filter(([key, field]) => {
      const value = payload[key];
      if (optional.has(key) && value === undefined) return false;
      return !field.is(value);
    })
    .map(([key, field]) => `${kind}.${key}: ${JSON.stringify(payload[key])} is not ${field.name}`);
}

async function agentRuntime(agent: Record<string, unknown>, config: Record<string, unknown> = {}) {
  return watch(await Runtime.fromDict({ ...config, agents: [{ id: "a", name: "A", ...agent }] }));
}

/** Polls on the event loop; the condition is the crash the test itself causes, so it comes. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

afterAll(async () => {
  await Promise.all(runtimes.map((runtime) => runtime.close()));
});

describe("every declared event is emitted by some run", () => {
  it("a ReAct run over an MCP server, with preflight, tools, usage, context and memory", async () => {
    const llm = scriptedModel(
      [
        (request: ModelRequest) => {
          const last = request.messages.at(-1)!;
          if (last.role === "tool") return { text: "done" };
          return { toolCalls: [{ id: "c1", name: "mcp__calc__add", arguments: { a: 2, b: 40 } }] };
        },
      ],
      { whenExhausted: "repeat-last" },
    );
    const runtime = await agentRuntime({
      llm,
      tools: [
        {
          id: "calc",
          type: "mcp",
          config: {
            server: { command: process.execPath, args: [DEMO, "--stdio"], stderr: "ignore" },
            tools: ["add"],
            connection: "pooled",
            probe_on_preflight: true,
          },
        },
        { id: "mem", type: "memory" },
      ],
    });
    const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "add" });
    expect(result.stopReason).toBe("completed");
    await runtime.close();
  });

  it("streams, reasoning, failing and streaming tools, artifacts, retries and structured output", async () => {
    let flaky = 0;
    const tools = [
      addTool,
      defineTool({
        name: "broken",
        description: "",
        execute: () => {
          throw new Error("no");
        },
      }),
      defineTool({
        name: "talk",
        description: "",
        execute: (_params, ctx) => {
          ctx.emitDelta("hello");
          return "said";
        },
      }),
      defineTool({
        name: "flaky",
        description: "",
        execute: () => {
          if (flaky++ === 0) throw new ToolRateLimitError("busy");
          return "ok";
        },
      }),
    ];
    const runtime = await agentRuntime({
      tools,
      tool_executor: { type: "retry", config: { initial_delay_ms: 0, jitter: "none" } },
      llm: scriptedModel([
        { toolCalls: [toolCall("broken", {}), toolCall("talk", {}), toolCall("flaky", {})] },
        { deltas: ['{"v":', " 1}"], reasoning: "thinking" },
        { text: '{"v": 2}' },
      ]),
    });
    const outputType = z.object({ v: z.literal(2) });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go", outputType }));
    expect(chunks.at(-1)!.result).toMatchObject({ stopReason: "completed", finalOutput: { v: 2 } });
  });

  it("a pattern's own steps, batches and artifacts, and plan_execute's plan", async () => {
    class Scripted extends BasePattern {
      async react(): Promise<StepAction> {
        await this.callToolBatch([
          ["add", { a: 1, b: 2 }],
          ["add", { a: 2, b: 2 }],
        ]);
        this.addArtifact({ name: "report", payload: {} });
        return { type: "final", output: "ok" };
      }
    }
    registerPlugin("pattern", "coverage_scripted", () => () => new Scripted());
    const scripted = await agentRuntime({ tools: [addTool], pattern: { type: "coverage_scripted" } });
    await scripted.runDetailed({ agentId: "a", inputText: "go" });
    const plan = await agentRuntime({
      tools: [addTool],
      pattern: { type: "plan_execute" },
      llm: scriptedModel([{ text: "1. Add the numbers" }, { text: "The sum is 42" }, { text: "Final" }]),
    });
    expect((await plan.runDetailed({ agentId: "a", inputText: "go" })).stopReason).toBe("completed");
  });

  it("suspension and a decision, a failing model, cancellation and a cost that cannot be known", async () => {
    const gated = defineTool({ name: "gated", description: "", approvalMode: "always", execute: () => "x" });
    const suspending = await agentRuntime({
      tools: [gated],
      llm: scriptedModel([{ toolCalls: [toolCall("gated", {}, "g1")] }, { text: "ok" }]),
    });
    const suspended = await suspending.runDetailed({ agentId: "a", inputText: "go", runId: "g" });
    expect(suspended.stopReason).toBe("suspended");
    await suspending.decide({ runId: "g", decisions: [{ toolCallId: "g1", action: "approve" }] });

    const failing = await agentRuntime({
      llm: scriptedModel([{ error: { type: "unknown", message: "who?" } }]),
    });
    await failing.runDetailed({ agentId: "a", inputText: "go" });

    const cancelled = await agentRuntime({ llm: scriptedModel([{ text: "never" }]) });
    await cancelled.runDetailed({ agentId: "a", inputText: "go", signal: AbortSignal.abort() });

    const unpriced = await agentRuntime({
      tools: [addTool],
      llm: {
        provider: "mock",
        model: "unpriced",
        pricing: { output: 1 },
        script: [
          { toolCalls: [toolCall("add", { a: 1, b: 1 })], usage: { inputTokens: 1, outputTokens: 1 } },
        ],
      },
    });
    await unpriced.runDetailed({ agentId: "a", inputText: "go", budget: { maxCostUsd: 0.000001 } });
  });

  it("memory that fails to inject and to write back", async () => {
    registerPlugin("memory", "coverage_failing", () => ({
      inject() {
        throw new Error("no recall");
      },
      writeback() {
        throw new Error("no write");
      },
      retrieve: () => [],
    }));
    const runtime = await agentRuntime({
      llm: scriptedModel([{ text: "ok" }]),
      memory: { type: "coverage_failing" },
    });
    expect(await runtime.run({ agentId: "a", inputText: "go" })).toBe("ok");
  });

  it("durable runs: checkpoints, a failed one, resumes, exhaustion and an unknown outcome", async () => {
    const shared = new InMemorySessionManager();
    let views = 0;
    const processes: ProcessView[] = [];
    const record = defineTool({
      name: "record",
      description: "Not idempotent",
      durableIdempotent: false,
      inputSchema: z.object({ value: z.string() }),
      execute: async () => {
        // The first process dies inside the call: its outcome is unknown to the next one.
        if (processes.length === 1) await processes[0]!.die();
        return "recorded";
      },
    });
    const model = () =>
      scriptedModel(
        [
          (request: ModelRequest) => {
            const results = request.messages.filter((message) => message.role === "tool").length;
            if (results === 0) return { toolCalls: [toolCall("add", { a: 1, b: 2 }, "a1")] };
            if (results === 1) return { toolCalls: [toolCall("record", { value: "x" }, "r1")] };
            return { text: "done" };
          },
        ],
        { whenExhausted: "repeat-last" },
      );
    const startProcess = async (setup: (view: ProcessView) => void = () => {}) => {
      const view = new ProcessView(shared);
      setup(view);
      const type = `coverage_store_${++views}`;
      registerPlugin("session", type, () => view);
      const runtime = await agentRuntime({ tools: [addTool, record], llm: model() }, { session: { type } });
      return { runtime, view };
    };
    const first = await startProcess();
    processes.push(first.view);
    void first.runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "k" });
    await until(() => first.view.isCrashed);
    const second = await startProcess((view) => {
      const original = view.createCheckpoint.bind(view);
      let writes = 0;
      view.createCheckpoint = async (sessionId, checkpoint) => {
        if (++writes === 1) throw new Error("disk full");
        return original(sessionId, checkpoint);
      };
    });
    processes.push(second.view);
    expect((await second.runtime.resumeRun("k")).stopReason).toBe("suspended");

    const resuming = await agentRuntime({
      tools: [addTool],
      llm: scriptedModel(
        [
          { toolCalls: [toolCall("add", { a: 1, b: 2 })] },
          { error: { type: "connection", message: "reset" } },
        ],
        { whenExhausted: "repeat-last" },
      ),
    });
    const exhausted = await resuming.runDetailed({
      agentId: "a",
      inputText: "go",
      durable: true,
      budget: { maxResumeAttempts: 1 },
    });
    expect(exhausted.stopReason).toBe("failed");
  });

  it("a provider that streams its reasoning", async () => {
    const thinking: LanguageModel = {
      specificationVersion: MODEL_SPECIFICATION_VERSION,
      provider: "test",
      modelId: "thinker",
      async *stream(): AsyncGenerator<ModelStreamPart> {
        yield { type: "reasoning-delta", text: "hmm" };
        yield { type: "text-delta", text: "ok" };
        yield { type: "finish", stopReason: "end_turn" };
      },
    };
    const runtime = await agentRuntime({ llm: thinking });
    expect(await runtime.run({ agentId: "a", inputText: "go" })).toBe("ok");
  });

  it("reloading the config and one agent", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "keel-coverage-"));
    const file = path.join(dir, "keel.json");
    await writeFile(file, JSON.stringify({ agents: [{ id: "a", name: "First" }] }));
    const runtime = watch(await Runtime.fromConfig(file));
    await writeFile(file, JSON.stringify({ agents: [{ id: "a", name: "Second" }] }));
    await runtime.reload();
    await runtime.reloadAgent("a");
  });

  it("a background tool whose job is submitted, polled and done", async () => {
    const render: BackgroundTool = {
      name: "render",
      description: "Render in the background",
      schema: () => ({ type: "object", properties: {} }),
      executionSpec: () => DEFAULT_EXECUTION_SPEC,
      invoke: () => "foreground",
      invokeBackground: async () => ({
        jobId: "job-1",
        toolId: "render",
        status: "pending",
        createdAt: "2026-01-01T00:00:00.000Z",
      }),
      pollJob: async (handle) => ({ jobId: handle.jobId, status: "succeeded", result: "rendered" }),
      cancelJob: async () => true,
    };
    const runtime = await agentRuntime({
      llm: scriptedModel([{ toolCalls: [toolCall("render", {}, "r1")] }, { text: "done" }]),
      tools: [render],
      tool_executor: { type: "safe", config: { poll_initial_delay_ms: 1 } },
    });
    expect((await runtime.runDetailed({ agentId: "a", inputText: "render" })).stopReason).toBe("completed");
  });

  it("together cover EVENT_SCHEMAS, every payload key of the type its event declares", () => {
    expect(Object.keys(EVENT_SCHEMAS).filter((name) => !seen.has(name))).toEqual([]);
    expect([...new Set(mistyped)]).toEqual([]);
    // The stream's kinds for a decision and a finished call are the ones the spec names.
    expect(seen).toContain("tool.decision");
    expect(seen).not.toContain("tool.decided");
  });
});
