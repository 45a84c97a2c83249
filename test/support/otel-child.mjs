// A process of test/otel-cross-process.test.ts: it traces an approval-gated agent with the `otel_bridge` event
// bus into an in-memory exporter, against a persistent store. Usage: node otel-child.mjs <buildDir> <spec as
// JSON>; the spec names the store, the run and the action: `start` runs the agent durably (it suspends on
// `pay`), `decide` approves the call. Prints `@@result <json>` with the run's result, then with its spans.
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { z } from "zod";
import { childSetup, report, resultSummary, toolResults } from "./child-common.mjs";

const { spec, keel, scriptedModel } = await childSetup();
const { defineTool, Runtime } = keel;

const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
);

const pay = defineTool({
  name: "pay",
  description: "Pay an amount (needs approval)",
  inputSchema: z.object({ amount: z.number() }),
  approvalMode: "always",
  execute: ({ amount }) => `paid ${amount}`,
});

// Decides from the transcript alone, so the process that resumes the run goes on where the first one stopped.
const model = scriptedModel(
  [
    ({ messages }) =>
      toolResults(messages) === 0
        ? { toolCalls: [{ id: "p1", name: "pay", arguments: { amount: 10 } }] }
        : { text: "Paid." },
  ],
  { whenExhausted: "repeat-last", modelId: "gpt-test" },
);

const runtime = await Runtime.fromDict({
  session: spec.store,
  events: { type: "otel_bridge" },
  agents: [{ id: "payer", name: "Payer", tools: [pay], llm: model }],
});

const result =
  spec.action === "start"
    ? await runtime.runDetailed({
        agentId: "payer",
        inputText: "pay 10",
        durable: true,
        runId: spec.runId,
        sessionId: spec.sessionId,
      })
    : await runtime.decide({ runId: spec.runId, decisions: [{ toolCallId: "p1", action: "approve" }] });
await runtime.close();
report("result", resultSummary(result));
report(
  "result",
  exporter.getFinishedSpans().map((span) => ({
    name: span.name,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    attributes: span.attributes,
    events: span.events.map((event) => event.name),
  })),
);
