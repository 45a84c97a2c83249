import { context, trace } from "@opentelemetry/api";
import { AlwaysOffSampler, BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createOtelBridge, defineTool, type Message, Runtime } from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";
import { AsyncLocalContextManager, memoryTracing, type SpanView } from "./support/otel-spans.js";

/**
 * Spans that nest under a tool call's `execute_tool` span: an agent-as-tool's child run, and a span the tool's
 * own code starts while it runs (when a context manager carries the active span).
 */

const one = (spans: SpanView[], name: string) => {
  const found = spans.filter((span) => span.name === name);
  expect(found, `spans named ${name}`).toHaveLength(1);
  return found[0]!;
};

/** A tool whose code starts a span of its own, as an instrumented HTTP client would, through the global API. */
const fetchPage = defineTool({
  name: "fetch_page",
  description: "Fetch a page",
  inputSchema: z.object({ url: z.string() }),
  execute: async ({ url }) => {
    await Promise.resolve();
    const span = trace.getTracer("http-client").startSpan(`GET ${url}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
    span.end();
    return "<html/>";
  },
});

function callsThenAnswers(toolName: string, args: Record<string, unknown>) {
  return scriptedModel(
    [
      (request) =>
        (request.messages.at(-1) as Message).role === "tool"
          ? { text: "done" }
          : { toolCalls: [{ id: "t1", name: toolName, arguments: args }] },
    ],
    { whenExhausted: "repeat-last" },
  );
}

describe("otel_bridge spans beneath a tool call", () => {
  const open: Runtime[] = [];
  afterEach(async () => {
    for (const runtime of open.splice(0)) await runtime.close();
    context.disable();
    trace.disable();
  });

  it("makes an agent-as-tool's child run a child of the parent's execute_tool span, in the same trace", async () => {
    const tracing = memoryTracing();
    const runtime = await Runtime.fromDict({
      events: await createOtelBridge({ tracerProvider: tracing.provider }),
      agents: [
        {
          id: "boss",
          name: "Boss",
          llm: callsThenAnswers("helper", { task: "look it up" }),
          tools: [{ id: "helper", type: "agent", config: { agent_id: "worker" } }],
        },
        { id: "worker", name: "Worker", llm: scriptedModel([{ text: "found it" }]) },
      ],
    });
    open.push(runtime);
    const result = await runtime.runDetailed({ agentId: "boss", inputText: "delegate" });
    expect(result.finalOutput).toBe("done");
    const spans = tracing.spans();
    const parent = one(spans, "invoke_agent boss");
    const call = one(spans, "execute_tool helper");
    const child = one(spans, "invoke_agent worker");
    expect(call.parentSpanId).toBe(parent.spanId);
    expect(child.parentSpanId).toBe(call.spanId);
    expect(child.traceId).toBe(parent.traceId);
    expect(child.attributes["keel.run.id"]).toBe(`${result.runId}:t1`);
    // The child's own model call hangs under the child's span.
    const childChats = spans.filter(
      (span) => span.name.startsWith("chat ") && span.parentSpanId === child.spanId,
    );
    expect(childChats).toHaveLength(1);
  });

  it("makes the execute_tool span active while the tool runs, so a span the tool starts is its child", async () => {
    context.setGlobalContextManager(new AsyncLocalContextManager());
    const tracing = memoryTracing();
    trace.setGlobalTracerProvider(tracing.provider);
    const runtime = await Runtime.fromDict({
      events: await createOtelBridge({ tracerProvider: tracing.provider }),
      agents: [
        {
          id: "reader",
          name: "Reader",
          llm: callsThenAnswers("fetch_page", { url: "/a" }),
          tools: [fetchPage],
        },
      ],
    });
    open.push(runtime);
    await runtime.runDetailed({ agentId: "reader", inputText: "read /a" });
    const spans = tracing.spans();
    const run = one(spans, "invoke_agent reader");
    const call = one(spans, "execute_tool fetch_page");
    const inner = one(spans, "GET /a");
    expect(inner.parentSpanId).toBe(call.spanId);
    expect(inner.traceId).toBe(run.traceId);
    // Outside the call, the run's spans are not active: the caller's context is unchanged.
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it("leaves the active span alone without a context manager: nothing inside could see it", async () => {
    const tracing = memoryTracing();
    trace.setGlobalTracerProvider(tracing.provider);
    const bus = await createOtelBridge({ tracerProvider: tracing.provider });
    let scoped: unknown = "not asked";
    const probe = defineTool({
      name: "probe",
      description: "Look at the bus's tool span scope",
      inputSchema: z.object({}),
      execute: (_input, ctx) => {
        scoped = (bus as { toolSpanScope(runId: string): unknown }).toolSpanScope(ctx.runId);
        return trace.getTracer("inner").startSpan("inner").end() ?? "ok";
      },
    });
    const runtime = await Runtime.fromDict({
      events: bus,
      agents: [{ id: "a", name: "A", llm: callsThenAnswers("probe", {}), tools: [probe] }],
    });
    open.push(runtime);
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(scoped).toBeUndefined();
    const inner = one(tracing.spans(), "inner");
    expect(inner.parentSpanId).toBeUndefined();
  });

  it("makes no spans for a run its sampler drops, and the run still completes", async () => {
    const spans: string[] = [];
    const provider = new BasicTracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [
        {
          onStart: () => {},
          onEnd: (span) => spans.push(span.name),
          forceFlush: async () => {},
          shutdown: async () => {},
        },
      ],
    });
    let started = 0;
    const counting = {
      getTracer: (name: string) => {
        const tracer = provider.getTracer(name);
        return {
          startSpan: (...args: Parameters<typeof tracer.startSpan>) => {
            started++;
            return tracer.startSpan(...args);
          },
          startActiveSpan: tracer.startActiveSpan.bind(tracer),
        };
      },
    };
    const bus = await createOtelBridge({ tracerProvider: counting });
    const runtime = await Runtime.fromDict({
      events: bus,
      agents: [{ id: "a", name: "A", llm: callsThenAnswers("probe", {}), tools: [fetchPage] }],
    });
    open.push(runtime);
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    // Only the run's own span was asked for: it did not record, so its model and tool calls made none.
    expect(started).toBe(1);
    expect(spans).toEqual([]);
  });
});
