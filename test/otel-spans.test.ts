import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { importOtelApi } from "../src/events/import-otel-api.js";
import { createOtelBridge, defineTool, PluginLoadError, Runtime } from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";
import { memoryTracing, type SpanView } from "./support/otel-spans.js";

/** Runs traced by the `otel_bridge` event bus into an in-memory exporter: span names, parents and attributes. */

const add = defineTool({
  name: "add",
  description: "Add two numbers",
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});
const pay = defineTool({
  name: "pay",
  description: "Pay an amount (needs approval)",
  inputSchema: z.object({ amount: z.number() }),
  approvalMode: "always",
  execute: ({ amount }) => `paid ${amount}`,
});
const broken = defineTool({
  name: "broken",
  description: "Always fails",
  inputSchema: z.object({}),
  execute: () => {
    throw new Error("the disk is full");
  },
});

const ADD_THEN_ANSWER = [
  {
    text: "Adding.",
    toolCalls: [{ id: "c1", name: "add", arguments: { a: 2, b: 40 } }],
    usage: { inputTokens: 120, outputTokens: 12, cacheReadTokens: 100, reasoningTokens: 5 },
  },
  { text: "It is 42.", usage: { inputTokens: 140, outputTokens: 6 } },
];

async function tracedRuntime(
  script: Parameters<typeof scriptedModel>[0],
  options: { captureContent?: boolean } = {},
) {
  const tracing = memoryTracing();
  const events = await createOtelBridge({ tracerProvider: tracing.provider, ...options });
  const runtime = await Runtime.fromDict({
    events,
    agents: [
      {
        id: "helper",
        name: "Helper",
        tools: [add, pay, broken],
        llm: scriptedModel(script, { modelId: "gpt-test" }),
      },
    ],
  });
  return { runtime, tracing, events };
}

const byName = (spans: SpanView[], name: string) => spans.filter((span) => span.name === name);
const one = (spans: SpanView[], name: string) => {
  const found = byName(spans, name);
  expect(found, `spans named ${name}`).toHaveLength(1);
  return found[0]!;
};

describe("otel_bridge spans", () => {
  const open: Runtime[] = [];
  const dir = mkdtempSync(join(tmpdir(), "keel-otel-spans-"));
  afterEach(async () => {
    for (const runtime of open.splice(0)) await runtime.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("traces a run with a tool call: invoke_agent, then chat and execute_tool beneath it", async () => {
    const { runtime, tracing } = await tracedRuntime(ADD_THEN_ANSWER);
    open.push(runtime);
    const result = await runtime.runDetailed({ agentId: "helper", inputText: "2 + 40?", sessionId: "s-1" });
    expect(result.stopReason).toBe("completed");
    const spans = tracing.spans();
    expect(spans.map((span) => span.name).sort()).toEqual([
      "chat gpt-test",
      "chat gpt-test",
      "execute_tool add",
      "invoke_agent helper",
    ]);
    const run = one(spans, "invoke_agent helper");
    expect(run.parentSpanId).toBeUndefined();
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "helper",
      "gen_ai.agent.id": "helper",
      "gen_ai.provider.name": "mock",
      "gen_ai.conversation.id": "s-1",
      "gen_ai.usage.input_tokens": 260,
      "gen_ai.usage.output_tokens": 18,
      "keel.run.id": result.runId,
      "keel.run.stop_reason": "completed",
      "keel.usage.llm_calls": 2,
      "keel.usage.tool_calls": 1,
    });
    for (const span of spans.filter((span) => span !== run)) {
      expect(span.parentSpanId).toBe(run.spanId);
      expect(span.traceId).toBe(run.traceId);
    }
    const [first, second] = byName(spans, "chat gpt-test");
    expect(first!.kind).toBe(SpanKind.CLIENT);
    expect(first!.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "mock",
      "gen_ai.request.model": "gpt-test",
      "gen_ai.response.model": "gpt-test",
      "gen_ai.response.finish_reasons": ["tool_call"],
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 12,
      "gen_ai.usage.cache_read.input_tokens": 100,
      "gen_ai.usage.reasoning.output_tokens": 5,
    });
    expect(second!.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
    const tool = one(spans, "execute_tool add");
    expect(tool.kind).toBe(SpanKind.INTERNAL);
    expect(tool.attributes).toEqual({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "add",
      "gen_ai.tool.call.id": "c1",
      "gen_ai.tool.type": "function",
    });
    // No content unless asked for.
    for (const span of spans) {
      expect(Object.keys(span.attributes).filter((key) => /arguments|result|messages/.test(key))).toEqual([]);
    }
  });

  it("records content only with captureContent", async () => {
    const { runtime, tracing } = await tracedRuntime(ADD_THEN_ANSWER, { captureContent: true });
    open.push(runtime);
    await runtime.runDetailed({ agentId: "helper", inputText: "2 + 40?" });
    const spans = tracing.spans();
    expect(one(spans, "execute_tool add").attributes).toMatchObject({
      "gen_ai.tool.call.arguments": '{"a":2,"b":40}',
      "gen_ai.tool.call.result": "42",
    });
    const answers = byName(spans, "chat gpt-test").map((span) =>
      JSON.parse(String(span.attributes["gen_ai.output.messages"])),
    );
    expect(answers[1]).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "It is 42." }], finish_reason: "stop" },
    ]);
    expect(
      JSON.parse(String(one(spans, "invoke_agent helper").attributes["gen_ai.output.messages"])),
    ).toEqual([{ role: "assistant", parts: [{ type: "text", content: "It is 42." }] }]);
  });

  it("shows a suspension and its resume as events, the resumed segment a child of the run's first span", async () => {
    const { runtime, tracing } = await tracedRuntime([
      { toolCalls: [{ id: "p1", name: "pay", arguments: { amount: 10 } }] },
      { text: "Paid." },
    ]);
    open.push(runtime);
    const suspended = await runtime.runDetailed({ agentId: "helper", inputText: "pay 10" });
    expect(suspended.stopReason).toBe("suspended");
    const before = tracing.spans();
    const first = one(before, "invoke_agent helper");
    expect(first.attributes["keel.run.stop_reason"]).toBe("suspended");
    expect(first.events.map((event) => event.name)).toEqual(["keel.tool.suspended", "keel.run.suspended"]);
    expect(first.events[0]!.attributes).toMatchObject({
      "gen_ai.tool.name": "pay",
      "gen_ai.tool.call.id": "p1",
    });
    expect(first.events[1]!.attributes).toEqual({ "keel.run.pending_tool_call_ids": ["p1"] });
    expect(byName(before, "execute_tool pay")).toEqual([]);
    tracing.reset();

    const resumed = await runtime.decide({
      runId: suspended.runId,
      decisions: [{ toolCallId: "p1", action: "approve" }],
    });
    expect(resumed.stopReason).toBe("completed");
    const after = tracing.spans();
    const segment = one(after, "invoke_agent helper");
    expect(segment.traceId).toBe(first.traceId);
    expect(segment.parentSpanId).toBe(first.spanId);
    expect(segment.attributes).toMatchObject({
      "keel.run.resumed": true,
      "keel.run.stop_reason": "completed",
    });
    expect(segment.events.map((event) => event.name)).toEqual(["keel.run.resumed", "keel.tool.decision"]);
    expect(segment.events[1]!.attributes).toEqual({
      "gen_ai.tool.name": "pay",
      "gen_ai.tool.call.id": "p1",
      "keel.decision.action": "approve",
    });
    expect(one(after, "execute_tool pay").parentSpanId).toBe(segment.spanId);
    expect(one(after, "chat gpt-test").parentSpanId).toBe(segment.spanId);
  });

  it("makes a new run a child of its request's trace context, and its resume a child of the run's own span", async () => {
    const { runtime, tracing } = await tracedRuntime([
      { toolCalls: [{ id: "p1", name: "pay", arguments: { amount: 10 } }] },
      { text: "Paid." },
    ]);
    open.push(runtime);
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const callerSpanId = "b7ad6b7169203331";
    const suspended = await runtime.runDetailed({
      agentId: "helper",
      inputText: "pay 10",
      traceContext: { traceparent: `00-${traceId}-${callerSpanId}-01`, tracestate: "vendor=blue" },
    });
    expect(suspended.stopReason).toBe("suspended");
    const first = one(tracing.spans(), "invoke_agent helper");
    expect(first).toMatchObject({ traceId, parentSpanId: callerSpanId });
    tracing.reset();

    await runtime.decide({ runId: suspended.runId, decisions: [{ toolCallId: "p1", action: "approve" }] });
    // The checkpoint kept the run's own span, not the caller's: the resumed segment hangs beneath the first.
    expect(one(tracing.spans(), "invoke_agent helper")).toMatchObject({
      traceId,
      parentSpanId: first.spanId,
    });
  });

  it("records a failed tool call and a failed model call as errors with error.type", async () => {
    // The script has one answering turn: the second model call finds it exhausted and fails.
    const { runtime, tracing } = await tracedRuntime([
      { toolCalls: [{ id: "b1", name: "broken", arguments: {} }] },
    ]);
    open.push(runtime);
    const result = await runtime.runDetailed({ agentId: "helper", inputText: "break" });
    expect(result.stopReason).toBe("failed");
    const spans = tracing.spans();
    const tool = one(spans, "execute_tool broken");
    expect(tool.status.code).toBe(SpanStatusCode.ERROR);
    expect(tool.status.message).toContain("the disk is full");
    expect(tool.attributes["error.type"]).toEqual(expect.any(String));
    expect(tool.events.map((event) => event.name)).toEqual(["exception"]);

    const chats = byName(spans, "chat gpt-test");
    expect(chats.map((span) => span.status.code)).toEqual([SpanStatusCode.UNSET, SpanStatusCode.ERROR]);
    const failedChat = chats[1]!;
    expect(failedChat.attributes["error.type"]).toBe(result.errorDetails?.code);
    expect(failedChat.attributes["gen_ai.response.model"]).toBeUndefined();

    const run = one(spans, "invoke_agent helper");
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
    expect(run.attributes).toMatchObject({
      "error.type": result.errorDetails?.code,
      "keel.run.stop_reason": "failed",
    });
  });

  it("is selected in a config as events: otel_bridge and sends spans to the global tracer provider", async () => {
    const tracing = memoryTracing();
    trace.setGlobalTracerProvider(tracing.provider);
    try {
      const runtime = await Runtime.fromDict({
        events: { type: "otel_bridge", config: { capture_content: true } },
        agents: [{ id: "helper", name: "Helper", tools: [add], llm: scriptedModel(ADD_THEN_ANSWER) }],
      });
      open.push(runtime);
      await runtime.runDetailed({ agentId: "helper", inputText: "2 + 40?" });
      const spans = tracing.spans();
      expect(spans.map((span) => span.name)).toContain("invoke_agent helper");
      expect(one(spans, "execute_tool add").attributes["gen_ai.tool.call.arguments"]).toBe('{"a":2,"b":40}');
      // The bus still delivers events to subscribers: it forwards to its inner async bus.
      expect(runtime.eventBus.getHistory({ name: "run.finished" })).toHaveLength(1);
    } finally {
      trace.disable();
    }
  });

  it("keeps a suspended run's trace when a file_logging bus wraps the bridge", async () => {
    const tracing = memoryTracing();
    trace.setGlobalTracerProvider(tracing.provider);
    try {
      const runtime = await Runtime.fromDict({
        events: {
          type: "file_logging",
          config: {
            inner: { type: "otel_bridge" },
            log_path: join(tmpdir(), `keel-otel-${process.pid}.jsonl`),
          },
        },
        agents: [
          {
            id: "helper",
            name: "Helper",
            tools: [pay],
            llm: scriptedModel([
              { toolCalls: [{ id: "p1", name: "pay", arguments: { amount: 1 } }] },
              { text: "ok" },
            ]),
          },
        ],
      });
      open.push(runtime);
      const suspended = await runtime.runDetailed({ agentId: "helper", inputText: "pay" });
      await runtime.decide({ runId: suspended.runId, decisions: [{ toolCallId: "p1", action: "approve" }] });
      const [first, resumed] = byName(tracing.spans(), "invoke_agent helper");
      expect(resumed!.parentSpanId).toBe(first!.spanId);
      expect(resumed!.traceId).toBe(first!.traceId);
    } finally {
      trace.disable();
    }
  });

  it("fails with an install hint when @opentelemetry/api cannot be imported", async () => {
    const error = await importOtelApi("@opentelemetry/api-that-is-not-installed").catch((caught) => caught);
    expect(error).toBeInstanceOf(PluginLoadError);
    expect(error.code).toBe("plugin.load");
    expect(error.message).toContain('event bus "otel_bridge" needs the npm package @opentelemetry/api');
    expect(error.hint).toContain("npm install @opentelemetry/api");
  });
});
