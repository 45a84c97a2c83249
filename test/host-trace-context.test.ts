import { context, trace } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import { appConfigSchema } from "../src/config/app-config-schema.js";
import { createInMemoryTransportPair, serveKeelRunner } from "../src/host/index.js";
import { createOtelBridge, Runtime } from "../src/index.js";
import {
  binding,
  collect,
  createTestHost,
  HOST_RUNNER_CONFIG,
  message,
  typesOf,
} from "./support/host-scenario.js";
import { langBotErrors } from "./support/langbot-schemas.js";
import { AsyncLocalContextManager, memoryTracing } from "./support/otel-spans.js";

/**
 * The host's trace crosses the host ↔ runner boundary: the host writes its W3C trace context into the run
 * context's `runtime.metadata`, and the Keel runner's run — traced by the `otel_bridge` bus — is its child.
 */

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const HOST_SPAN_ID = "00f067aa0ba902b7";
const HOST_TRACE = { traceparent: `00-${TRACE_ID}-${HOST_SPAN_ID}-01`, tracestate: "vendor=blue" };

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A host and a Keel runner over the in-memory pair; the runner's runtime traces into memory. */
async function setUp() {
  const tracing = memoryTracing();
  const events = await createOtelBridge({ tracerProvider: tracing.provider });
  const runtime = await Runtime.fromDict({ ...HOST_RUNNER_CONFIG, events });
  const [hostEnd, runnerEnd] = createInMemoryTransportPair();
  const sent: string[] = [];
  const send = hostEnd.send.bind(hostEnd);
  hostEnd.send = (text) => {
    sent.push(text);
    send(text);
  };
  const { channel } = serveKeelRunner({
    runtime,
    agents: appConfigSchema().parse(HOST_RUNNER_CONFIG).agents,
    transport: runnerEnd,
  });
  const { host } = createTestHost();
  await host.attach(hostEnd);
  closers.push(
    () => runtime.close(),
    () => channel.close(),
    () => host.close(),
  );
  /** The run contexts the host sent. */
  const contexts = () =>
    sent
      .map((text) => JSON.parse(text) as { action?: string; data?: { context?: Record<string, unknown> } })
      .filter((frame) => frame.action === "run_agent")
      .map((frame) => frame.data!.context!);
  return { host, tracing, contexts };
}

/** The span of each run the runner traced. */
const agentSpans = (tracing: ReturnType<typeof memoryTracing>) =>
  tracing.spans().filter((span) => span.name === "invoke_agent helper");

describe("trace context from host to runner", () => {
  it("makes the runner's invoke_agent span a child of the span host.run names", async () => {
    const { host, tracing, contexts } = await setUp();
    const results = await collect(
      host.run(message("please lookup keel"), binding(), { traceContext: HOST_TRACE }),
    );
    expect(typesOf(results).at(-1)).toBe("run.completed");

    const [sentContext] = contexts();
    expect(sentContext!.runtime).toMatchObject({ metadata: HOST_TRACE });
    // LangBot's models keep `runtime.metadata` open for observability, so the context still conforms to both.
    expect(langBotErrors("AgentRunContext", sentContext)).toEqual([]);
    expect(langBotErrors("AgentRunContext", sentContext, "langbot-4.11")).toEqual([]);

    const [agent] = agentSpans(tracing);
    expect(agent).toMatchObject({ traceId: TRACE_ID, parentSpanId: HOST_SPAN_ID });
    // The whole run lives in the host's trace: the model call and the tool call beneath the agent span.
    const beneath = tracing.spans().filter((span) => span.parentSpanId === agent!.spanId);
    expect(beneath.map((span) => span.name).sort()).toEqual([
      "chat host",
      "chat host",
      "execute_tool lookup",
    ]);
    expect(new Set(tracing.spans().map((span) => span.traceId))).toEqual(new Set([TRACE_ID]));
  });

  it("sends no trace context when there is none, and the runner's run starts its own trace", async () => {
    const { host, tracing, contexts } = await setUp();
    const results = await collect(host.run(message("hello"), binding()));
    expect(typesOf(results).at(-1)).toBe("run.completed");
    const metadata = (contexts()[0]!.runtime as { metadata: Record<string, unknown> }).metadata;
    expect(metadata).not.toHaveProperty("traceparent");
    expect(metadata).not.toHaveProperty("tracestate");
    const [agent] = agentSpans(tracing);
    expect(agent!.parentSpanId).toBeUndefined();
    expect(agent!.traceId).not.toBe(TRACE_ID);
  });

  it("ignores a malformed traceparent: the run is traced on its own and still completes", async () => {
    const { host, tracing } = await setUp();
    const results = await collect(
      host.run(message("hello"), binding(), { traceContext: { traceparent: "nonsense" } }),
    );
    expect(typesOf(results).at(-1)).toBe("run.completed");
    expect(agentSpans(tracing)[0]!.parentSpanId).toBeUndefined();
  });

  it("takes the span active where the host's run is iterated when host.run names none", async () => {
    const { host, contexts } = await setUp();
    const manager = new AsyncLocalContextManager();
    expect(context.setGlobalContextManager(manager)).toBe(true);
    closers.push(async () => context.disable());
    const hostTracing = memoryTracing();
    const hostSpan = hostTracing.provider.getTracer("host").startSpan("host turn");
    const results = await context.with(trace.setSpan(context.active(), hostSpan), () =>
      collect(host.run(message("hello"), binding())),
    );
    hostSpan.end();
    expect(typesOf(results).at(-1)).toBe("run.completed");
    const { traceId, spanId } = hostSpan.spanContext();
    expect(contexts()[0]!.runtime).toMatchObject({ metadata: { traceparent: `00-${traceId}-${spanId}-01` } });
  });
});
